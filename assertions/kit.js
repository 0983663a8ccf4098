// The kit's checks answered from the provider's grading (agent_evals.provider.grading), so that a
// row's checks cost no Python process each. The suites' hook (hooks/kit.js, beforeEach) points
// every `type: python` assertion on assertions/<check>.py at the function of the same name here;
// each finds its result in the row's metadata.checks (same check, metric and config) and returns
// it. The verdicts and reasons are those of assertions/<check>.py: one grade function, two ways to
// call it. A result that is missing fails with a reason; nothing here ever throws (a throw would
// turn Promptfoo's row into an error).

"use strict";

const fs = require("node:fs");
const path = require("node:path");

const POLICY = require(path.join(__dirname, "..", "hooks", "policy.generated.json")); // written by agent_evals.hook_policy

function same(a, b) {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== "object" || typeof b !== "object") return a == null && b == null;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  return ka.length === kb.length && ka.every((k) => same(a[k], b[k]));
}

function answer(name, negated) {
  return (output, context) => {
    try {
      const metadata = (context.providerResponse && context.providerResponse.metadata) || context.metadata || {};
      const checks = Array.isArray(metadata.checks) ? metadata.checks : [];
      const config = context.config === undefined ? null : context.config;
      const found = checks.find((c) => c.name === name && Boolean(c.negated) === negated
        && same(c.config === undefined ? null : c.config, config));
      if (!found) {
        return { pass: false, score: 0, reason: `${name}: not graded by the provider (no result in metadata.checks; is this row from the kit's provider?)` };
      }
      return { pass: found.pass, score: found.score, reason: found.reason, namedScores: found.namedScores || {} };
    } catch (error) {
      return { pass: false, score: 0, reason: `${name}: could not read the provider's result: ${error.message}` };
    }
  };
}

// not_<check>: the check's not- form (the hook writes `not-python` on assertions/<check>.py so), negated by the
// provider's grading itself: it passes when the check fails, and a check that was not graded never passes.
for (const file of fs.readdirSync(__dirname)) {
  if (!file.endsWith(".py")) continue;
  const name = path.basename(file, ".py");
  module.exports[name] = answer(name, false);
  module.exports[`${POLICY.negated_js_prefix}${name}`] = answer(name, true);
}
