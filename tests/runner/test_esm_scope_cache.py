"""The resolve hook preloaded into the kit's Promptfoo (runner/esm_scope_cache.cjs): it answers what Node's
own resolution answers (checked side by side in its verify mode), and leaves every other case to Node,
errors included."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from agent_evals.runner.promptfoo_process import (
    ESM_SCOPE_CACHE,
    promptfoo_command,
    promptfoo_env,
    with_node_preload,
)
from tests.conftest import PROJECT_ROOT

NODE = PROJECT_ROOT / "node_modules" / ".bin" / "node"
VERIFY_ENV = "AGENT_EVALS_ESM_SCOPE_VERIFY"


def test_promptfoo_under_the_kit_resolves_as_node_does(tmp_path: Path) -> None:
    config = tmp_path / "promptfooconfig.yaml"
    config.write_text('prompts: ["hello {{x}}"]\nproviders: [echo]\ntests:\n  - vars: {x: a}\n',
                      encoding="utf-8")
    verify = tmp_path / "verify.json"
    env = {**promptfoo_env(), VERIFY_ENV: str(verify), "PROMPTFOO_CONFIG_DIR": str(tmp_path / "promptfoo")}
    done = subprocess.run([*promptfoo_command("eval", "-c", str(config), "--no-cache", "--no-table",
                                              "-o", str(tmp_path / "out.json"))],
                          env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    seen = json.loads(verify.read_text())
    assert seen["differences"] == []
    assert seen["answered"] > 500  # Promptfoo's chunks and drizzle-orm's files: thousands of imports


# An installed package of ES modules, and what its imports meet: a sub-folder of CommonJS, a .mjs file,
# symbolic links (to a file of the package, to one outside any package), a package without a type, a
# missing file, a folder, a query.
PACKAGE_FILES = {
    "node_modules/esm-pkg/package.json": (
        '{"name": "esm-pkg", "type": "module", "exports": {".": "./index.js"}}'
    ),
    "node_modules/esm-pkg/index.js": (
        'import { a } from "./a.js";\n'
        'import { c } from "./c.mjs";\n'
        'import { linked } from "./linked.js";\n'
        'import { deep as alias } from "./alias.js";\n'
        'import cjs from "./cjs/b.js";\n'
        'import plain from "../plain-pkg/x.js";\n'
        'import { q } from "./q.js?v=1";\n'
        "const failures = [];\n"
        'for (const name of ["./missing.js", "./folder", "../plain-pkg/missing.js"]) {\n'
        "  try { await import(name); } catch (error) { failures.push(`${name}: ${error.code}`); }\n"
        "}\n"
        "console.log(JSON.stringify({ a, c, linked, alias, cjs, plain, q, failures }));\n"
    ),
    "node_modules/esm-pkg/a.js": 'import { deep } from "./lib/deep.js";\nexport const a = "a+" + deep;\n',
    "node_modules/esm-pkg/lib/deep.js": 'export const deep = "deep";\n',
    "node_modules/esm-pkg/c.mjs": 'export const c = "c";\n',
    "node_modules/esm-pkg/q.js": 'export const q = "q";\n',
    "node_modules/esm-pkg/cjs/package.json": '{"type": "commonjs"}',
    "node_modules/esm-pkg/cjs/b.js": 'module.exports = "commonjs b";\n',
    "node_modules/esm-pkg/folder/index.js": 'export const f = "f";\n',
    "node_modules/plain-pkg/package.json": '{"name": "plain-pkg"}',
    "node_modules/plain-pkg/x.js": 'export default "detected as a module";\n',
    "elsewhere/linked.js": 'export const linked = "linked";\n',
    "main.mjs": 'import "esm-pkg";\n',
}


def _package(root: Path) -> Path:
    for name, text in PACKAGE_FILES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    (root / "node_modules" / "esm-pkg" / "linked.js").symlink_to(root / "elsewhere" / "linked.js")
    package = root / "node_modules" / "esm-pkg"
    (package / "alias.js").symlink_to(package / "lib" / "deep.js")
    return root / "main.mjs"


def _node(script: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(NODE), str(script)], env=env, cwd=script.parent, capture_output=True,
                          text=True, timeout=60)


def test_a_package_of_es_modules_loads_as_it_does_without_the_hook(tmp_path: Path) -> None:
    main = _package(tmp_path)
    base = {"PATH": os.environ["PATH"], "NODE_NO_WARNINGS": "1"}
    plain = _node(main, base)
    verify = tmp_path / "verify.json"
    hooked = _node(main, {**with_node_preload(dict(base), ESM_SCOPE_CACHE), VERIFY_ENV: str(verify)})
    assert plain.returncode == hooked.returncode == 0, plain.stderr + hooked.stderr
    assert hooked.stdout == plain.stdout
    result = json.loads(hooked.stdout)
    assert result["linked"] == "linked" and result["alias"] == "deep" and result["cjs"] == "commonjs b"
    assert result["plain"] == "detected as a module"
    assert result["failures"] == [
        "./missing.js: ERR_MODULE_NOT_FOUND", "./folder: ERR_UNSUPPORTED_DIR_IMPORT",
        "../plain-pkg/missing.js: ERR_MODULE_NOT_FOUND",
    ]
    seen = json.loads(verify.read_text())
    assert seen["differences"] == []
    # answered: ./a.js, ./lib/deep.js, ./c.mjs, ./alias.js (as its real path, lib/deep.js: one module); left
    # to Node: the bare name, the CommonJS folder, the link whose file is in no package (its format is the
    # real file's), the package without a type, the query, the missing file and the folder
    assert seen["answered"] == 4, seen


def test_the_preload_comes_once_after_the_users_options_and_keeps_a_path_with_spaces(tmp_path: Path) -> None:
    folder = tmp_path / "a folder"
    folder.mkdir()
    first, second = folder / "first.cjs", folder / "second.cjs"
    first.write_text('console.log("first");\n', encoding="utf-8")
    second.write_text('console.log("second");\n', encoding="utf-8")
    script = tmp_path / "main.js"
    script.write_text('console.log("main");\n', encoding="utf-8")
    env = with_node_preload({"PATH": os.environ["PATH"], "NODE_OPTIONS": "--no-deprecation"}, first)
    env = with_node_preload(env, second)
    assert env["NODE_OPTIONS"].startswith("--no-deprecation ")
    assert with_node_preload(dict(env), first) == env  # an environment that has it already: once
    assert _node(script, env).stdout.split() == ["first", "second", "main"]
