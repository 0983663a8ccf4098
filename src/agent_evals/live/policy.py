"""The live policy: per agent, the checks that need no reference case (``evals/live-policy.yaml``).

::

    agents:
      helpdesk:                         # an agent of agent_config/agents/
        pack: tickets                   # whose checks it may use (default: generic)
        versions:                       # optional: the versions it covers (default: every version)
          - {model: "gpt-4.1*", instructions_sha256: 3f2a9c1e}   # a glob; a prefix of the hash
        checks:
          - check: tool_not_executed    # a kit check (docs/assertions.md)
            metric: forbidden_tools     # default: the check's name
            config: {tools: [close_ticket]}
          - check: ticket_valid         # a check of the pack
            when: {called: [open_ticket]}   # applies only to conversations that called one

:func:`load_policy` reads it and returns every problem at once, one line each with the file
and line (as ``agent-evals check`` does for suites), before anything is read or spent: an
unknown agent, pack or check (with a did-you-mean), a check of another pack, a config the
check's own parser refuses, a tool the portal does not have, an unknown key.
"""

from __future__ import annotations

import fnmatch
import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent_evals.assertions.registry import JUDGED_CHECKS, KitCheckError, kit_check_names, pack_checks, pack_of

from agent_evals.suites.check_ref import CheckRef
from agent_evals.suites.problems import Problem, did_you_mean
from agent_evals.record import AgentInfo
from agent_evals.suites.files import Located, SuiteFileError, read_yaml
from agent_evals.packs import PackError, load_pack
from agent_evals.packs import load_pack
from agent_evals.paths import evals_dir
from agent_evals.suites.files import ProviderEntry

POLICY_FILE = "live-policy.yaml"
_TOP = ("agents",)
_AGENT = ("pack", "versions", "checks")
_CHECK = ("check", "metric", "config", "when")
_VERSION = ("model", "instructions_sha256")


@dataclass(frozen=True)
class PolicyCheck:
    name: str
    metric: str
    config: Any
    called: tuple[str, ...] = ()  # applies only when one of these tools was called
    where: Located | None = None

    @property
    def judged(self) -> bool:
        return self.name in JUDGED_CHECKS

    def ref(self, position: int) -> CheckRef:
        return CheckRef(self.name, self.config, self.metric, position)

    def assertion(self) -> dict[str, Any]:
        """The check as a suite writes it (a case file's ``assert`` entry)."""
        out: dict[str, Any] = {"type": "python", "value": f"file://../../assertions/{self.name}.py", "metric": self.metric}
        if self.config is not None:
            out["config"] = self.config
        return out


@dataclass(frozen=True)
class VersionRule:
    model: str | None = None
    instructions_sha256: str | None = None

    def covers(self, agent: AgentInfo) -> bool:
        if self.model is not None and not fnmatch.fnmatchcase(agent.model, self.model):
            return False
        return self.instructions_sha256 is None or agent.instructions_sha256.startswith(self.instructions_sha256)

    def describe(self) -> str:
        parts = [f"model {self.model}" if self.model else "", f"instructions {self.instructions_sha256}…"
                 if self.instructions_sha256 else ""]
        return ", ".join(p for p in parts if p) or "any version"


@dataclass(frozen=True)
class AgentPolicy:
    agent: str
    pack: str = "generic"
    versions: tuple[VersionRule, ...] = ()
    checks: tuple[PolicyCheck, ...] = ()

    def covers(self, agent: AgentInfo) -> bool:
        return not self.versions or any(rule.covers(agent) for rule in self.versions)

    def coverage(self) -> str:
        return "; ".join(rule.describe() for rule in self.versions) or "every version"


@dataclass(frozen=True)
class Policy:
    path: Path
    agents: dict[str, AgentPolicy] = field(default_factory=dict)
    digest: str = ""


def load_policy(path: Path, *, config_dir: Path | None = None) -> tuple[Policy | None, list[Problem]]:
    """The policy, or None and every problem found (see the module docstring)."""
    if not path.is_file():
        return None, [Problem(str(path), f"no live policy here: write one (docs/live.md#the-policy-file), "
                                         f"e.g. evals/{POLICY_FILE}")]
    try:
        data, lines = read_yaml(path)
    except SuiteFileError as exc:
        return None, [Problem(exc.where, exc.detail)]
    problems: list[Problem] = []
    where = _where(path, lines)
    if not isinstance(data, Mapping) or not isinstance(data.get("agents"), Mapping) or not data["agents"]:
        return None, [Problem(Located(path, 1), "a live policy is a mapping with `agents:`, one entry per agent")]
    problems += _unknown(data, _TOP, where(data), "the policy")
    from agent_evals.agent.config import available_agents  # lazy: loads pydantic only when used (start-up time)

    known = list(available_agents(config_dir))
    agents = {}
    for name, raw in data["agents"].items():
        at = where(raw) if isinstance(raw, Mapping) else where(data["agents"])
        if name not in known:
            problems.append(Problem(at, f"unknown agent {name!r}; agents: {', '.join(known)}{did_you_mean(str(name), known)}"))
            continue
        agent = _agent(str(name), raw, at, where, problems, config_dir)
        if agent is not None:
            agents[agent.agent] = agent
    digest = hashlib.sha256(path.read_bytes()).hexdigest()[:12]
    return (Policy(path, agents, digest) if not problems else None), problems


def _where(path: Path, lines: dict[int, int]) -> Any:
    return lambda node: Located(path, lines.get(id(node)))


def _unknown(raw: Mapping[str, Any], allowed: tuple[str, ...], at: Located, what: str) -> list[Problem]:
    return [Problem(at, f"unknown key {k!r} in {what}; allowed: {', '.join(allowed)}{did_you_mean(str(k), list(allowed))}")
            for k in raw if k not in allowed]


def _agent(name: str, raw: Any, at: Located, where: Any, problems: list[Problem], config_dir: Path | None) -> AgentPolicy | None:
    if not isinstance(raw, Mapping):
        problems.append(Problem(at, f"agent {name}: give a mapping with {', '.join(_AGENT)}"))
        return None
    problems += _unknown(raw, _AGENT, at, f"agent {name}")
    pack_name = str(raw.get("pack") or "generic")
    try:
        pack_checks(load_pack(pack_name))  # its checks' names: none may shadow a core check
    except (PackError, KitCheckError) as exc:
        problems.append(Problem(at, f"agent {name}: {exc}"))
        return None
    checks = raw.get("checks")
    if not isinstance(checks, list) or not checks:
        problems.append(Problem(at, f"agent {name}: `checks:` must list at least one check"))
        return None
    versions = _versions(name, raw.get("versions"), at, where, problems)
    parsed = [_check(name, pack_name, item, where(item) if isinstance(item, Mapping) else at, problems, config_dir)
              for item in checks]
    metrics = [c.metric for c in parsed if c is not None]
    for metric in {m for m in metrics if metrics.count(m) > 1}:
        problems.append(Problem(at, f"agent {name}: metric {metric!r} is given to two checks; give each its own `metric:`"))
    return AgentPolicy(name, pack_name, versions, tuple(c for c in parsed if c is not None))


def _versions(name: str, raw: Any, at: Located, where: Any, problems: list[Problem]) -> tuple[VersionRule, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list) or not all(isinstance(item, Mapping) for item in raw):
        problems.append(Problem(at, f"agent {name}: `versions:` is a list of {{model, instructions_sha256}}"))
        return ()
    rules = []
    for item in raw:
        problems += _unknown(item, _VERSION, where(item), f"agent {name}'s version")
        values = {k: item.get(k) for k in _VERSION}
        if not any(values.values()) or not all(v is None or isinstance(v, str) for v in values.values()):
            problems.append(Problem(where(item), f"agent {name}: a version names a model (glob) or an instructions hash prefix"))
            continue
        rules.append(VersionRule(values["model"], values["instructions_sha256"]))
    return tuple(rules)


def _check(
    agent: str, pack: str, raw: Any, at: Located, problems: list[Problem], config_dir: Path | None
) -> PolicyCheck | None:
    if not isinstance(raw, Mapping) or not isinstance(raw.get("check"), str):
        problems.append(Problem(at, f"agent {agent}: each check is a mapping with `check: <name>` (and metric, config, when)"))
        return None
    name = raw["check"]
    head = f"agent {agent}: check {name}"
    problems += _unknown(raw, _CHECK, at, head)
    its_pack = load_pack(pack)  # loaded before (_agent), so it loads
    known = list(kit_check_names(its_pack))  # the core's, the built-in packs' and the agent's pack's
    if name not in known:
        problems.append(Problem(at, f"agent {agent}: unknown check {name!r}; checks: {', '.join(known)}{did_you_mean(name, known)}"))
        return None
    owner = pack_of(name, its_pack)
    if owner is not None and owner != its_pack.name:
        problems.append(Problem(at, f"{head}: a check of the {owner} pack; this agent's pack is {its_pack.name} (`pack:`)"))
        return None
    if name == "goal_reached" and raw.get("config"):
        problems.append(Problem(at, f"{head}: give no config: in a live policy the goal is inferred from the user's messages"))
    called = _called(raw.get("when"), head, at, problems)
    check = PolicyCheck(name, str(raw.get("metric") or name), raw.get("config"), called, at)
    problems += [Problem(at, f"agent {agent}: {line}") for line in _assertion_problems(agent, pack, check, called, config_dir)]
    return check


def _called(raw: Any, head: str, at: Located, problems: list[Problem]) -> tuple[str, ...]:
    if raw is None:
        return ()
    called = raw.get("called") if isinstance(raw, Mapping) else None
    called = [called] if isinstance(called, str) else called
    if not isinstance(raw, Mapping) or set(raw) != {"called"} or not isinstance(called, list) or not called:
        problems.append(Problem(at, f"{head}: `when:` is {{called: [<tool>, …]}}"))
        return ()
    return tuple(str(c) for c in called)


def _assertion_problems(
    agent: str, pack: str, check: PolicyCheck, called: tuple[str, ...], config_dir: Path | None
) -> list[str]:
    """The suites' own preflight of one assertion (config by the check's parser, tools, the pack), and the
    tools of ``when``."""
    from agent_evals.agent.config import load_agent_config  # lazy: loads pydantic only when used (start-up time)
    from agent_evals.preflight.suite_checks import ProviderPlan, suite_assertion_problems, tool_name_problems  # lazy: loads pydantic only when used (start-up time)

    entry = ProviderEntry(id="live", label=agent, config={}, where=Located(Path(".")))
    plan = ProviderPlan(entry, {}, load_agent_config(agent, config_dir=config_dir), load_pack(pack))
    # the scorer grades in its own process: a check of a pack outside the kit has no file in the kit's assertions/
    outside = pack_of(check.name) is None and pack_of(check.name, plan.pack) is not None
    found = [line.replace(f"assertion 1 ({check.name})", f"check {check.name}", 1)
             for line in suite_assertion_problems(check.assertion(), 0, [plan], evals_dir() / "live")
             if not (outside and " names no file " in line)]
    found += [f"check {check.name}: when.called: {line}"
              for line in tool_name_problems("tool_not_executed", _Tools(called), plan)]
    return found


@dataclass(frozen=True)
class _Tools:
    """A config naming tools that must exist on the portal (as tool_not_executed's does)."""

    tools: tuple[str, ...]
