"""The packages that name their modules' types at the package level load each module on first use
(``agent_evals.lazy_exports``): every public name still resolves to its module's own object, an
unknown name is still an AttributeError, and importing one small module loads no more."""

from __future__ import annotations

import importlib
import pkgutil
import subprocess
import sys

import pytest

from agent_evals.lazy_exports import lazy_exports

PACKAGES = ["agent_evals.llm", "agent_evals.report", "agent_evals.agent"]


@pytest.mark.parametrize("package", PACKAGES)
def test_every_public_name_is_its_modules_own(package: str) -> None:
    module = importlib.import_module(package)
    submodules = [importlib.import_module(f"{package}.{m.name}") for m in pkgutil.iter_modules(module.__path__)]
    for name in module.__all__:
        value = getattr(module, name)
        assert any(getattr(sub, name, None) is value for sub in submodules), name
    star: dict[str, object] = {}
    exec(f"from {package} import *", star)  # noqa: S102 - what `import *` gives, as a user writes it
    assert set(module.__all__) <= set(star)


@pytest.mark.parametrize("package", PACKAGES)
def test_a_public_name_that_is_also_a_module_of_the_package_is_bound_eagerly(package: str) -> None:
    """Importing ``package.compare`` binds the module as ``package.compare``: a function of that name
    exported lazily would then be found as the module, so the package binds it when it loads."""
    probe = (f"import {package} as p, importlib, pkgutil\n"
             "both = set(p.__all__) & {m.name for m in pkgutil.iter_modules(p.__path__)}\n"
             "before = {n: vars(p).get(n) for n in both}\n"
             "for n in both: importlib.import_module(f'{p.__name__}.{n}')\n"
             "print(all(before[n] is not None and getattr(p, n) is before[n] and callable(before[n]) for n in both),"
             " sorted(both))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.startswith("True"), out


@pytest.mark.parametrize("package", PACKAGES)
def test_an_unknown_name_is_an_attribute_error(package: str) -> None:
    module = importlib.import_module(package)
    with pytest.raises(AttributeError, match=f"module '{package}' has no attribute 'nope'"):
        module.nope  # noqa: B018
    assert not hasattr(module, "nope")
    with pytest.raises(ImportError, match="cannot import name 'nope'"):
        exec(f"from {package} import nope", {})  # noqa: S102


def test_a_name_is_loaded_once_and_kept() -> None:
    get = lazy_exports("agent_evals.record", {"KitError": "ends"})
    record = importlib.import_module("agent_evals.record")
    assert get("KitError") is record.ends.KitError
    with pytest.raises(AttributeError):
        get("RunRecord")  # not in this mapping


def _loaded(code: str, modules: list[str]) -> dict[str, bool]:
    probe = f"import sys\n{code}\nprint(*[m in sys.modules for m in {modules!r}])"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout.split()
    return dict(zip(modules, [word == "True" for word in out], strict=True))


def test_one_small_module_loads_no_more_of_its_package() -> None:
    assert _loaded("import agent_evals.report.figures", ["agent_evals.report.build", "sqlite3"]) == {
        "agent_evals.report.build": False, "sqlite3": False}
    assert _loaded("import agent_evals.llm.budget", ["agent_evals.llm.openai_chat", "asyncio"]) == {
        "agent_evals.llm.openai_chat": False, "asyncio": False}
    assert _loaded("import agent_evals.agent.types", ["agent_evals.agent.mcp_session", "pydantic"]) == {
        "agent_evals.agent.mcp_session": False, "pydantic": False}


def test_the_runner_starts_promptfoo_without_the_report_or_pydantic() -> None:
    """What the runner imports before the first suite's Promptfoo starts: the report is read after the
    run, pydantic with the first agent configuration it reads."""
    modules = ["agent_evals.report.build", "agent_evals.report.sources", "pydantic", "agent_evals.provider.config"]
    assert _loaded("import agent_evals.runner.run", modules) == dict.fromkeys(modules, False)
    assert _loaded("import agent_evals.runner.run\nfrom agent_evals.report import summary_lines", modules)[
        "agent_evals.report.build"]
