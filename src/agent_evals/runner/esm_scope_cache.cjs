// Preloaded into every promptfoo command of the kit (NODE_OPTIONS=--require, by promptfoo_env).
//
// For each ES module file it loads, Node looks up the package.json of the file's package to learn its
// "type", and (Node 22 and 24) parses that file's whole "exports" map again each time. drizzle-orm, which
// Promptfoo loads ~100 files of, has a 179 KB one: ~0.17 s of CPU at each Promptfoo start, a fifth of it.
// This hook resolves the relative imports between the files of an installed package whose package.json
// says "type": "module" itself, with each package.json read once: the same URL (the real path) and the
// same format ("module") Node gives them. Anything else (bare names, "#" imports, a package without a
// type, a file that is missing or a folder, a URL with a query, --preserve-symlinks) goes to Node's own
// resolution, errors included.
//
// AGENT_EVALS_ESM_SCOPE_VERIFY=<file>: resolve each of those imports with Node's resolution as well and
// write what was answered and every difference to <file> (JSON) at exit
// (tests/runner/test_esm_scope_cache.py).
"use strict";

const fs = require("node:fs");
const nodeModule = require("node:module");
const path = require("node:path");
const { fileURLToPath, pathToFileURL } = require("node:url");

const VERIFY_ENV = "AGENT_EVALS_ESM_SCOPE_VERIFY";
// a folder -> the "type" of its package ("module", "commonjs", or null: none, or unreadable)
const scopeTypes = new Map();

function scopeType(folder) {
  const passed = [];
  let type = null;
  for (let dir = folder; ; dir = path.dirname(dir)) {
    if (scopeTypes.has(dir)) {
      type = scopeTypes.get(dir);
      break;
    }
    passed.push(dir);
    if (path.basename(dir) === "node_modules" || path.dirname(dir) === dir) break; // as Node: none above
    let text;
    try {
      text = fs.readFileSync(path.join(dir, "package.json"), "utf8");
    } catch {
      continue;
    }
    try {
      const declared = JSON.parse(text).type;
      type = declared === "module" || declared === "commonjs" ? declared : null;
    } catch {
      type = null; // Node's own resolution says what is wrong with it
    }
    break;
  }
  for (const dir of passed) scopeTypes.set(dir, type);
  return type;
}

function resolved(specifier, parentURL) {
  if (!(specifier.startsWith("./") || specifier.startsWith("../")) || /[?#%\\]/.test(specifier)) return null;
  if (!parentURL || !parentURL.startsWith("file://") || /[?#]/.test(parentURL)) return null;
  if (!parentURL.includes("/node_modules/")) return null; // the project's own files: Node's
  let real;
  try {
    real = fs.realpathSync(path.resolve(path.dirname(fileURLToPath(parentURL)), specifier));
    if (!fs.statSync(real).isFile()) return null;
  } catch {
    return null;
  }
  const extension = path.extname(real); // the format is the real file's, as Node finds it
  if (extension !== ".js" && extension !== ".mjs") return null;
  if (extension === ".js" && scopeType(path.dirname(real)) !== "module") return null;
  return { url: pathToFileURL(real).href, format: "module", shortCircuit: true };
}

const preserveSymlinks =
  process.execArgv.includes("--preserve-symlinks") || process.env.NODE_PRESERVE_SYMLINKS === "1";
if (typeof nodeModule.registerHooks === "function" && !preserveSymlinks) {
  const verifyPath = process.env[VERIFY_ENV];
  const seen = { answered: 0, differences: [] };
  nodeModule.registerHooks({
    resolve(specifier, context, nextResolve) {
      const answer = resolved(specifier, context.parentURL);
      if (answer === null) return nextResolve(specifier, context);
      if (verifyPath) {
        seen.answered += 1;
        const node = nextResolve(specifier, context);
        if (node.url !== answer.url || node.format !== answer.format) {
          seen.differences.push({ specifier, parent: context.parentURL, node, answer });
        }
      }
      return answer;
    },
  });
  if (verifyPath) process.on("exit", () => fs.writeFileSync(verifyPath, JSON.stringify(seen)));
}
