// Promptfoo extension hooks of the kit (Node, so no Python process per row):
//
//   extensions:
//     - file://../../hooks/kit.js:beforeAll
//     - file://../../hooks/kit.js:beforeEach
//     - file://../../hooks/kit.js:afterEach
//     - file://../../hooks/kit.js:afterAll
//
// beforeAll  under the kit's runner: waits for the suite's system, which the runner starts beside
//            Promptfoo, and puts what it gives the workers into the environment (systemFromRunner).
//            Under plain `npx promptfoo eval` (not started by the kit's runner): points
//            Promptfoo at the project's Python and starts the system of the suite's pack (the
//            portal, owned by this Promptfoo process: it abandons the run's PRs and stops when
//            Promptfoo exits, Ctrl-C included); what it gives the workers (the portal's URL and
//            token, the pack's name) stays in the environment.
// beforeEach points the kit's checks (type: python on assertions/<check>.py) at assertions/kit.js,
//            which answers them from the provider's grading: one grading per row, in the worker,
//            instead of one Python process per check (AGENT_EVALS_ASSERTIONS=python keeps the
//            Python processes). Without a grader model, model-graded assertions are NOT GRADED:
//            taken out of the row's assertions (Promptfoo counts each assertion as passed or
//            failed, a weight-0 one as passed, so no entry can stand for "not graded") and listed
//            in metadata.not_graded. The kit's judged checks (policy.judged_checks: goal_reached, expected_statements,
//            trajectory_quality) are asked of the judge by the provider: live when a judge model is
//            configured, in a replay when the case's cassettes hold judge replies; otherwise they
//            too are NOT GRADED. (When the judge can answer, the provider also grades an
//            informative goal_reached for a conversation case with a goal that does not list one.)
// afterEach  the provider already abandoned its row's PRs (metadata.cleanup); a row it could not
//            clean (it crashed, timed out, the portal was down) is cleaned here through Python.
//            An informative goal_reached becomes the row's named score goal_reached (it is no
//            assertion, so it never counts as passed or failed; one the judge could not grade gets
//            none). Prints one line per finished case: PASS, FAIL, ERROR, INVALID (the simulated user
//            spoiled the conversation: the provider's error row with metadata.user_review.invalid) or
//            INCOMPLETE (every failing entry is NOT GRADED, or its Promptfoo grader failed: a
//            deciding check was not graded).
// afterAll   undoes what the run left active and stops the system beforeAll started.
//
// The logic lives in Python (agent_evals.runner.plain, agent_evals.hooks); this file only wires
// Promptfoo's hooks to it. The policy it acts on (model-graded types, judged checks, how a kit check is
// written, the case id, the words of a row) is Python's too, read from policy.generated.json
// (written by agent_evals.hook_policy; never edit it by hand). A hook must never throw in afterEach (Promptfoo would log and go on,
// but the row's cleanup report would be lost), so every step catches its own errors.

"use strict";

const { spawnSync } = require("node:child_process");
const path = require("node:path");
const fs = require("node:fs");

const POLICY = require(path.join(__dirname, "policy.generated.json"));

const ROOT = path.resolve(__dirname, "..");
const MODEL_GRADED = new Set(POLICY.model_graded_types);
const JUDGED = new Set(POLICY.judged_checks);
const KIT_CHECK = new RegExp(POLICY.kit_check_file); // assertions/<check>.py[:<function>]
const KIT_CHECK_JS = new RegExp(POLICY.kit_check_js); // assertions/kit.js:<check> or :not_<check>
const CASE_ID = new RegExp(POLICY.case_id);
const state = { startedSystem: null, plain: false, replayFolders: null, judgedCases: null };

function python() {
  const venv = path.join(ROOT, ".venv", "bin", "python");
  return process.env.PROMPTFOO_PYTHON || (fs.existsSync(venv) ? venv : "python3");
}

function runPython(args, input) {
  const done = spawnSync(python(), args, { cwd: ROOT, input, encoding: "utf8", env: process.env, timeout: 120000 });
  const text = (done.stdout || "").trim().split("\n").pop() || "{}";
  try {
    return JSON.parse(text);
  } catch (error) {
    return { error: `python ${args.join(" ")} answered no JSON: ${(done.stderr || text).trim().split("\n").pop()}` };
  }
}

function suiteFolder(context) {
  const argv = process.argv;
  for (let i = 0; i < argv.length - 1; i += 1) {
    if (argv[i] === "-c" || argv[i] === "--config") return path.dirname(path.resolve(argv[i + 1]));
  }
  for (const provider of (context.suite && context.suite.providers) || []) {
    const base = provider && provider.config && provider.config.basePath;
    if (base) return base;
  }
  return process.cwd();
}

// The kit's runner started Promptfoo beside the suite's system and hands the system over on a pipe
// (agent_evals.runner.system_handoff): one JSON object, {env, unset} or {error}. No Python worker
// starts before beforeAll returns, so what the system gives the workers reaches them all.
async function systemFromRunner(fd) {
  const text = await new Promise((resolve, reject) => {
    const chunks = [];
    const stream = fs.createReadStream("", { fd, autoClose: true });
    stream.on("data", (chunk) => chunks.push(chunk));
    stream.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    stream.on("error", reject);
  });
  let info;
  try {
    info = JSON.parse(text);
  } catch (error) {
    throw new Error("agent-evals: the runner closed the system's pipe without a word (did it stop?)");
  }
  if (info.error) throw new Error(`agent-evals: ${info.error}`);
  for (const key of info.unset || []) delete process.env[key];
  for (const [key, value] of Object.entries(info.env || {})) process.env[key] = value;
}

async function beforeAll(context) {
  state.replayFolders = replayFolders(context);
  if (process.env.AGENT_EVALS_RUN_ID && process.env.AGENT_EVALS_PACK) { // the kit's runner
    const fd = process.env[POLICY.system_fd_env];
    delete process.env[POLICY.system_fd_env]; // the workers have no such pipe
    if (fd) await systemFromRunner(Number(fd));
    return undefined;
  }
  state.plain = true;
  if (!process.env.PROMPTFOO_PYTHON) process.env.PROMPTFOO_PYTHON = python();
  process.env.PROMPTFOO_DISABLE_ADAPTIVE_SCHEDULER = process.env.PROMPTFOO_DISABLE_ADAPTIVE_SCHEDULER || "1";
  const info = runPython(["-m", "agent_evals.runner.plain", "start", suiteFolder(context), "--owner-pid", String(process.pid)]);
  if (info.error) throw new Error(`agent-evals: ${info.error}`);
  for (const [key, value] of Object.entries(info.env || {})) process.env[key] = value; // what the system gives the workers
  process.env.AGENT_EVALS_RUN_ID = info.run_id;
  state.startedSystem = info.started || null;
  console.log(`agent-evals: ${info.where ? `${info.where}; ` : ""}run ${info.run_id}`);
  return undefined;
}

function judgeConfigured() {
  if (process.env.AGENT_EVALS_JUDGE) return process.env.AGENT_EVALS_JUDGE === "1"; // said by the runner
  if ((process.env.JUDGE_MODEL || "").trim().toLowerCase() === POLICY.judge_off) return false;
  const endpoint = process.env.AZURE_OPENAI_ENDPOINT || process.env.OPENAI_BASE_URL || process.env.OPENAI_API_KEY;
  const model = process.env.JUDGE_MODEL || process.env.AGENT_MODEL;
  return Boolean(endpoint && model);
}

// The folders a replay reads (a provider's `replay:`, else AGENT_EVALS_REPLAY_DIR; "golden" is the
// suite's golden/), as the provider resolves them.
function replayFolders(context) {
  const env = process.env.AGENT_EVALS_REPLAY_DIR;
  const providers = (context && context.suite && context.suite.providers) || [];
  const folders = [];
  for (const provider of providers) {
    const config = (provider && provider.config) || {};
    const replay = config.replay || env;
    if (!replay) continue;
    const base = config.basePath || suiteFolder(context);
    folders.push(replay === "golden" ? path.join(base, "golden") : path.resolve(base, replay));
  }
  if (providers.length === 0 && env) folders.push(env === "golden" ? path.join(suiteFolder(context || {}), "golden") : path.resolve(env));
  return folders;
}

// The case ids whose cassettes hold judge replies (model_calls of role judge), in the replay folders.
function judgedCases(folders) {
  const found = new Set();
  for (const folder of folders) {
    let files = [];
    try {
      files = fs.readdirSync(folder).filter((f) => f.endsWith(".json"));
    } catch (error) {
      continue; // the provider says what is wrong with the folder
    }
    for (const file of files) {
      try {
        const cassette = JSON.parse(fs.readFileSync(path.join(folder, file), "utf8"));
        if ((cassette.model_calls || []).some((c) => c && c.role === "judge")) found.add(String(cassette.case_id));
      } catch (error) {
        // not a cassette; the provider reports a broken one
      }
    }
  }
  return found;
}

function caseId(test) {
  const id = test.metadata && test.metadata.id;
  if (id) return String(id);
  const match = CASE_ID.exec(String(test.description || ""));
  return match ? match[1] : "";
}

// Whether the provider's judge can answer this test's judged checks: in a replay, its cassettes hold
// judge replies; live, a judge model is configured. Returns null, or why not.
function judgeMissing(test) {
  const folders = state.replayFolders || replayFolders(null);
  if (folders.length === 0) {
    return judgeConfigured() ? null : "no judge model is configured (JUDGE_MODEL and an LLM endpoint)";
  }
  if (state.judgedCases === null) state.judgedCases = judgedCases(folders);
  return state.judgedCases.has(caseId(test)) ? null : "the case's cassette holds no judge replies (it was recorded without a judge)";
}

// The judged check an assertion is, in any of its forms (as agent_evals.assertions.registry.check_form reads them).
function judgedName(assertion) {
  if (!assertion) return null;
  const value = String(assertion.value || "").replace(/^file:\/\//, "");
  const python = assertion.type === "python" || assertion.type === "not-python";
  const match = python ? KIT_CHECK.exec(value) : assertion.type === "javascript" ? KIT_CHECK_JS.exec(value) : null;
  if (!match) return null;
  const name = !python && match[1].startsWith(POLICY.negated_js_prefix) ? match[1].slice(POLICY.negated_js_prefix.length) : match[1];
  return JUDGED.has(name) ? name : null;
}

const KIT_JS = `file://${path.join(ROOT, "assertions", "kit.js")}`;

// A kit check `type: python` becomes kit.js:<check> (answered from the provider's grading); its not- form
// (`type: not-python`) becomes kit.js:not_<check>, negated by the kit itself (Promptfoo's own inversion would drop
// the check's reason and pass a check that could not be graded), or assertions/<check>.py:get_assert_not when
// AGENT_EVALS_ASSERTIONS=python keeps the Python processes.
function fastForm(assertion) {
  if (!assertion || (assertion.type !== "python" && assertion.type !== "not-python")) return assertion;
  const value = String(assertion.value || "").replace(/^file:\/\//, "");
  const match = KIT_CHECK.exec(value);
  if (!match || match[2] !== undefined || !fs.existsSync(path.join(ROOT, "assertions", `${match[1]}.py`))) return assertion;
  const negated = assertion.type === "not-python";
  if (process.env.AGENT_EVALS_ASSERTIONS === "python") {
    return negated ? { ...assertion, type: "python", value: `${assertion.value}:${POLICY.negated_py_function}` } : assertion;
  }
  return { ...assertion, type: "javascript", value: `${KIT_JS}:${negated ? POLICY.negated_js_prefix : ""}${match[1]}` };
}

async function beforeEach({ test }) {
  const original = (test && test.assert) || [];
  const judged = original.filter((a) => judgedName(a) !== null);
  const missing = judged.length ? judgeMissing(test || {}) : null;
  const asserts = original.map(fastForm);
  const changed = asserts.some((a, i) => a !== original[i]);
  const graded = asserts.filter((a) => a && MODEL_GRADED.has(String(a.type || "").replace(/^not-/, "")));
  const offGraded = judgeConfigured() ? [] : graded;
  const offJudged = missing === null ? [] : asserts.filter((a) => judgedName(a) !== null);
  if (offGraded.length === 0 && offJudged.length === 0) {
    return changed ? { test: { ...test, assert: asserts } } : undefined; // else the test stays as it is
  }
  // an entry of a weight-0 assertion decides nothing: the gate does not count it (agent_evals.report.rows.INFORMATIVE)
  const informative = (a) => (a.weight === 0 ? ` ${POLICY.informative}` : "");
  // Not graded: out of the assertions altogether. Promptfoo counts every assertion's result as a pass or a
  // fail (and forces a weight-0 one to pass), so an entry for it would read as a pass in the viewer.
  const notGraded = [
    ...offGraded.map((a) => `${a.type} (${a.metric || "no metric"}): no grader model${informative(a)}`),
    ...offJudged.map((a) => `${judgedName(a)} (${a.metric || "no metric"}): ${missing}${informative(a)}`),
  ];
  const kept = asserts.filter((a) => !offGraded.includes(a) && !offJudged.includes(a));
  return { test: { ...test, assert: kept, metadata: { ...(test.metadata || {}), not_graded: notGraded } } };
}

// The informative goal_reached the provider graded (a weight-0 entry carries no named score).
function informativeScores(result) {
  const metadata = (result.response && result.response.metadata) || {};
  const checks = Array.isArray(metadata.checks) ? metadata.checks : [];
  const scores = {};
  for (const check of checks) {
    // one the judge could not grade has no score: its 0 would read as "not reached"
    if (check && check.informative && !check.not_graded && typeof check.score === "number") scores[check.name] = check.score;
  }
  return scores;
}

// The first failing check, as the report picks it (its first failing entry, not Promptfoo's result.error,
// which holds the last one); the whole reason: the runner fits it on the line as the report does.
function firstFailure(result) {
  if (result.failureReason === 2) return String(result.error || "").split("\n")[0];
  const components = (result.gradingResult && result.gradingResult.componentResults) || [];
  const failed = components.find((c) => c && c.pass === false && !notGraded(c))
    || components.find((c) => c && c.pass === false);
  return failed ? String(failed.reason || "") : String(result.error || "").split("\n")[0];
}

// A failed row whose every failing entry is NOT GRADED: a check that decides the row could not be
// graded (the judge gave no verdict), so the row is neither a pass nor a fail.
function notGraded(component) {  // the kit's NOT GRADED entry, or Promptfoo's grader that failed (llm-rubric)
  return String(component.reason || "").startsWith(POLICY.not_graded) || Boolean(component.metadata && component.metadata.graderError);
}

function incomplete(result) {
  const components = (result.gradingResult && result.gradingResult.componentResults) || [];
  const failing = components.filter((c) => c && c.pass === false);
  return failing.length > 0 && failing.every(notGraded);
}

function rowStatus(result, metadata) {
  if (result.failureReason === 2) return metadata.user_review && metadata.user_review.invalid ? "INVALID" : "ERROR";
  if (result.success) return "PASS";
  return incomplete(result) ? "INCOMPLETE" : "FAIL";
}

function caseLine(test, result) {
  const metadata = (result.response && result.response.metadata) || {};
  const status = rowStatus(result, metadata);
  const id = metadata.case_id || (test.metadata && test.metadata.id) || test.description || "?";
  return {
    id, status, description: test.description || "", latency_ms: result.latencyMs || 0,
    reason: status === "PASS" ? "" : firstFailure(result), error_kind: metadata.error_kind || null,
    provider: (result.provider && (result.provider.label || result.provider.id)) || "",
    not_graded: ((test.metadata && test.metadata.not_graded) || []).length,
  };
}

function printCase(line) {
  if (process.env.AGENT_EVALS_CASE_LINES === "json") {
    console.log(POLICY.case_line_marker + JSON.stringify(line));
    return;
  }
  const seconds = (line.latency_ms / 1000).toFixed(1);
  console.log(`${line.id.padEnd(5)} ${line.status.padEnd(5)} ${seconds.padStart(6)}s  ${line.reason}`.trimEnd());
}

async function afterEach({ test, result }) {
  const out = {};
  try {
    const metadata = (result.response && result.response.metadata) || {};
    const cleanup = metadata.cleanup;
    const needsCleanup = !cleanup || cleanup.error || (cleanup.failed && Object.keys(cleanup.failed).length);
    if (needsCleanup && process.env.AGENT_EVALS_PACK) {
      const report = runPython(["-m", "agent_evals.hooks", "after-each"], JSON.stringify(result));
      if ((report.undone && report.undone.length) || report.error || report.failed) {
        out.metadata = { cleanup: { ...report, by: "hook" } };
      }
    }
  } catch (error) {
    out.metadata = { cleanup: { error: `agent-evals hook: ${error.message}` } };
  }
  try {
    const scores = informativeScores(result || {});
    if (Object.keys(scores).length) out.namedScores = scores;
  } catch (error) {
    // an informative score is a courtesy
  }
  try {
    printCase(caseLine(test || {}, result || {}));
  } catch (error) {
    // the line is a courtesy; the row is already saved
  }
  return Object.keys(out).length ? { result: out } : undefined;
}

async function afterAll() {
  if (!state.plain) return undefined; // the kit's runner sweeps and stops its own portal
  const report = runPython(["-m", "agent_evals.runner.plain", "stop", String(state.startedSystem || 0),
    process.env.AGENT_EVALS_RUN_ID || ""]);
  if ((report.undone || []).length || report.error) {  // the summary is in the system's words ("abandoned 2 PR(s)")
    console.log(`agent-evals: cleanup of ${process.env.AGENT_EVALS_RUN_ID}: ${report.summary}`);
  }
  return undefined;
}

module.exports = { beforeAll, beforeEach, afterEach, afterAll };
