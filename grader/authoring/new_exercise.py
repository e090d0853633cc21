"""``grader new-exercise NAME --assignment ID --like EXISTING [--signature SIG]``: every placeholder of a new exercise.

Modelled on an existing exercise (its shared checks and their points; its signature, ``returns`` and gradient
inputs where they fit), it writes, and refuses to overwrite:

* the stub in the assignment's ``exercises/`` file and the reference in ``solutions/`` (raising, so every
  check of the exercise fails until the reference is written);
* the config entry in ``assignments.yaml``: the shared checks the model has, plus one property check;
* ``grader/checks/<pkg>/test_<name>.py`` with that property check as a placeholder that always fails;
* an empty list of inputs in the package's ``conftest.py`` ``build_cases`` (the shared checks fail on it);
* a mutant in ``tests/corpus/<assignment>/mutants/``, a catalogue entry in
  ``grader/diagnosis/catalogue/<assignment>/``, a lesson step in ``grader/release/lesson/``, the contract row in
  ``docs/CONTRACT.md`` and a clause row in ``docs/contract-clauses.yaml``.

``--signature "q_new: torch.Tensor, k_cache: torch.Tensor -> torch.Tensor"`` gives a function its own
parameters and return annotation; then only what fits them is copied from the model: its ``returns`` names
where the new return is a tuple of as many, its gradient inputs that are among the new parameters (a tuple of
another length, or none fitting, is a placeholder to fill). Without it, the model's signature is copied whole.

Every placeholder carries ``MARKER``; ``grader.authoring.completeness.missing`` lists each one still there,
with the rest of what the exercise lacks (docs/adding-an-exercise.md).
"""

from __future__ import annotations

import ast
import keyword
import re
from dataclasses import dataclass
from pathlib import Path

from grader.config import ConfigError, load_config
from grader.files import read_yaml

MARKER = "TODO(new-exercise)"


class AuthoringError(Exception):
    """Bad input or a file that would be overwritten: one line, exit 2."""


@dataclass(frozen=True)
class Written:
    path: Path
    what: str


def snake(name: str) -> str:
    """``SlidingWindow`` -> ``sliding_window``; a snake_case name stays as it is."""
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower()


def _definition(source: str, name: str) -> ast.FunctionDef | ast.ClassDef | None:
    for node in ast.parse(source).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name == name:
            return node
    return None


def _signature(source: str, node: ast.FunctionDef | ast.ClassDef, name: str) -> str:
    """The model's ``def``/``class`` line with the new name: ``def NAME(v: torch.Tensor) -> torch.Tensor:``."""
    first = source.splitlines()[node.lineno - 1]
    body_line = node.body[0].lineno
    header = "\n".join(source.splitlines()[node.lineno - 1: body_line - 1]) or first
    return re.sub(rf"^(def|class) {re.escape(node.name)}\b", rf"\1 {name}", header.rstrip())


def given_signature(text: str, name: str) -> tuple[str, ast.FunctionDef]:
    """``--signature``'s ``PARAMS -> RETURN`` (or just ``PARAMS``) as a ``def`` line, and its parsed node."""
    params, arrow, returned = text.partition("->")
    header = f"def {name}({params.strip().removeprefix('(').removesuffix(')')})" + (
        f" -> {returned.strip()}:" if arrow else ":")
    try:
        node = ast.parse(header + "\n    pass\n").body[0]
    except SyntaxError as exc:
        raise AuthoringError(f"--signature {text!r} is not a parameter list (and return annotation): {exc.msg}") from None
    assert isinstance(node, ast.FunctionDef)
    return header, node


def returned_count(node: ast.FunctionDef) -> int | None:
    """How many values a ``-> tuple[A, B]`` annotation returns; None for one value (or no annotation)."""
    ann = node.returns
    if isinstance(ann, ast.Subscript) and isinstance(ann.value, ast.Name) and ann.value.id in ("tuple", "Tuple"):
        return len(ann.slice.elts) if isinstance(ann.slice, ast.Tuple) else 1
    return None


def call_signature(node: ast.FunctionDef) -> str:
    """The parameters as the contract row spells them, defaults kept and annotations dropped:
    ``T, device=None`` for ``def causal_mask(T: int, device: torch.device | None = None)``."""
    args = node.args
    positional = args.posonlyargs + args.args
    defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    parts = [a.arg if d is None else f"{a.arg}={ast.unparse(d)}" for a, d in zip(positional, defaults)]
    if args.vararg:
        parts.append(f"*{args.vararg.arg}")
    elif args.kwonlyargs:
        parts.append("*")
    parts += [a.arg if d is None else f"{a.arg}={ast.unparse(d)}" for a, d in zip(args.kwonlyargs, args.kw_defaults)]
    if args.kwarg:
        parts.append(f"**{args.kwarg.arg}")
    return ", ".join(parts)


def _append(path: Path, text: str) -> None:
    current = path.read_text(encoding="utf-8")
    path.write_text(current.rstrip("\n") + "\n\n\n" + text.rstrip("\n") + "\n", encoding="utf-8")


def _block_end(lines: list[str], start: int, indent: int) -> int:
    """The index after the YAML block that starts at ``lines[start]`` (a key at ``indent`` spaces)."""
    i = start + 1
    while i < len(lines) and (not lines[i].strip() or len(lines[i]) - len(lines[i].lstrip()) > indent):
        i += 1
    while i > start + 1 and not lines[i - 1].strip():
        i -= 1
    return i


def _shared_checks(checks_dir: Path) -> set[str]:
    """The checks of the package's ``test_common.py`` and its gate (``test_work.py``): run per exercise by config."""
    names: set[str] = set()
    for module in ("test_common.py", "test_work.py"):
        path = checks_dir / module
        if path.is_file():
            tree = ast.parse(path.read_text(encoding="utf-8"))
            names |= {n.name for n in tree.body if isinstance(n, ast.FunctionDef) and n.name.startswith("test_")
                      and "fn" in [a.arg for a in n.args.args]}
    return names


def new_exercise(name: str, assignment_id: str, like: str, root: Path, signature_text: str | None = None) -> list[Written]:
    """Write every placeholder of exercise ``name`` under the course repository ``root``; raises AuthoringError."""
    if not name.isidentifier() or keyword.iskeyword(name):
        raise AuthoringError(f"{name!r} is not a Python identifier: an exercise is named like a function or a class")
    try:
        config = load_config(root / "assignments.yaml")
        a = config.assignment(assignment_id)
    except ConfigError as exc:
        raise AuthoringError(str(exc)) from None
    if a.exercise(name) is not None:
        raise AuthoringError(f"{assignment_id!r} already has an exercise {name!r} (nothing written)")
    model = a.exercise(like)
    if model is None:
        known = ", ".join(ex.name for ex in a.exercises)
        raise AuthoringError(f"--like {like!r} is not an exercise of {assignment_id!r} (known: {known})")
    if a.stub is None or a.reference is None:
        raise AuthoringError(f"{assignment_id!r} has no stub or reference in {root / 'assignments.yaml'} (a student kit?)")
    stub_src, ref_src = a.stub.read_text(encoding="utf-8"), a.reference.read_text(encoding="utf-8")
    for path, src in ((a.stub, stub_src), (a.reference, ref_src)):
        if _definition(src, name) is not None:
            raise AuthoringError(f"{path} already defines {name!r} (nothing written)")
    like_stub = _definition(stub_src, like)
    if like_stub is None:
        raise AuthoringError(f"{a.stub} does not define {like!r}")
    sname = snake(name)
    is_class = isinstance(like_stub, ast.ClassDef)
    checks_dir = root / "grader" / "checks" / a.checks_package
    check_module = checks_dir / f"test_{sname}.py"
    own_check = f"test_{sname}_todo_property"
    mutant = root / "tests" / "corpus" / assignment_id / "mutants" / f"{sname}_todo.py"
    catalogue = root / "grader" / "diagnosis" / "catalogue" / assignment_id / f"{sname}_todo.yaml"
    lessons = [p for p in sorted((root / "grader" / "release" / "lesson").glob("*.yaml"))
               if (read_yaml(p) or {}).get("assignment") == assignment_id]
    contract, clauses = root / "docs" / "CONTRACT.md", root / "docs" / "contract-clauses.yaml"
    for path in (check_module, mutant, catalogue):
        if path.exists():
            raise AuthoringError(f"{path} already exists (nothing written)")
    if not lessons:
        raise AuthoringError(f"no lesson in {root / 'grader/release/lesson'} has `assignment: {assignment_id}`")
    for path in (contract, clauses):
        if not path.is_file():
            raise AuthoringError(f"{path} is missing")
    lesson_steps = (read_yaml(lessons[0]) or {}).get("steps") or {}
    clause_rows = (read_yaml(clauses) or {}).get("clauses") or []
    if name in lesson_steps:
        raise AuthoringError(f"{lessons[0]} already has a step {name!r} (nothing written)")
    if f"| `{name}(" in contract.read_text(encoding="utf-8"):
        raise AuthoringError(f"{contract} already has a row for {name!r} (nothing written)")
    if any(name in (c.get("subject") or ()) for c in clause_rows if isinstance(c, dict)):
        raise AuthoringError(f"{clauses} already has clauses about {name!r} (nothing written)")
    conftest_path = root / "grader" / "checks" / a.checks_package / "conftest.py"
    if conftest_path.is_file() and f'"{name}":' in conftest_path.read_text(encoding="utf-8"):
        raise AuthoringError(f"{conftest_path} already has inputs for {name!r} (nothing written)")
    shared = _shared_checks(checks_dir)
    if signature_text is not None and is_class:
        raise AuthoringError(f"--signature is for a function; {like!r} is a class (its constructor is copied)")
    if signature_text is None:
        signature, shape = _signature(stub_src, like_stub, name), like_stub
    else:
        signature, shape = given_signature(signature_text, name)
    returns, gradient_inputs = _what_fits(model, like_stub, shape)
    written: list[Written] = []

    # 1. The stub and the reference.
    what = "the class" if is_class else "the function"
    body = "    raise NotImplementedError" if not is_class else "    pass"
    _append(a.stub, f'{signature}\n    """{MARKER}: what `{name}` gives, in the lesson\'s words.\n\n'
                    f"    Shapes in and out; the way to do it; the classic mistake to avoid.\n"
                    f'    """\n{body}\n')
    written.append(Written(a.stub, f"the stub of {name}: its docstring"))
    _append(a.reference, f'{signature}\n    """{MARKER}: the reference solution of `{name}`."""\n'
                         f'    raise NotImplementedError("{MARKER}: write the reference solution of {name}")\n')
    written.append(Written(a.reference, f"the reference of {name}"))

    # 2. The config entry: the model's shared checks, one property check of its own.
    config_path = root / "assignments.yaml"
    lines = config_path.read_text(encoding="utf-8").split("\n")
    a_start = next(i for i, line in enumerate(lines) if line.rstrip() == f"  {assignment_id}:")
    a_end = _block_end(lines, a_start, 2)
    entry = [f"      {name}:", f'        purpose: "{MARKER}: what {name} gives, in the lesson\'s words"']
    if returns:
        unnamed = f"  # {MARKER}: name each value {name} returns, in order" if returns[0] == "value_0" else ""
        entry.append(f"        returns: [{', '.join(returns)}]{unnamed}")
    if gradient_inputs:
        entry.append(f"        gradient_inputs: [{', '.join(map(str, gradient_inputs))}]  # {MARKER}: "
                     f"{name}'s differentiable arguments (copied from {like})")
    entry.append("        checks:")
    m_start = next(i for i in range(a_start, a_end) if lines[i].rstrip() == f"      {like}:")
    m_end = _block_end(lines, m_start, 6)
    in_checks = False
    for line in lines[m_start + 1: m_end]:
        if line.strip() == "checks:":
            in_checks = True
            continue
        key = line.strip().split(":", 1)[0]
        if in_checks and line.startswith("          ") and key in shared:
            entry.append(line)
    entry.append(f"          {own_check}: 1  # {MARKER}: rename to the property it checks, set its points")
    lines[a_end:a_end] = entry
    config_path.write_text("\n".join(lines), encoding="utf-8")
    written.append(Written(config_path, f"{name}'s purpose and its checks' points"))

    # 3. The checks: one property placeholder that always fails; the shared checks' inputs.
    mark = f'pytestmark = pytest.mark.exercise("{name}")'
    check_module.write_text(
        f'"""`{name}`: its properties, one test each. {MARKER}: say them in the lesson\'s words."""\n\n'
        "from __future__ import annotations\n\nimport pytest\n\nfrom grader.checks import helpers as h  # noqa: F401\n\n"
        f"{mark}\n\n\n"
        f"def {own_check}(student, reference):\n"
        f'    """{MARKER}: one property of `{name}`, said as the lesson says it. Call the student\'s code\n'
        f"    (`student.{name}(...)`), compare with the property, and raise AssertionError with the message a\n"
        f'    student reads. Rename the test, and its entry in assignments.yaml, to the property."""\n'
        f'    raise AssertionError("{MARKER}: this check of `{name}` is not written yet (a grader bug: report it)")\n',
        encoding="utf-8")
    written.append(Written(check_module, f"{own_check}: the property check"))
    conftest = checks_dir / "conftest.py"
    if any(c in shared for c in (ln.strip().split(":", 1)[0] for ln in entry)) and conftest.is_file():
        text = conftest.read_text(encoding="utf-8")
        build = next((n for n in ast.parse(text).body if isinstance(n, ast.FunctionDef) and n.name == "build_cases"), None)
        ret = next((n for n in ast.walk(build) if isinstance(n, ast.Return) and isinstance(n.value, ast.Dict)), None) \
            if build else None
        if ret is not None:
            ctext = text.split("\n")
            close = ret.value.end_lineno - 1  # the line of the dict's closing brace
            ctext[close:close] = [f'        "{name}": [],  # {MARKER}: {name}\'s inputs, Case("{name}", args, kwargs, '
                                  f'label) each, like "{like}"\'s above; the shared checks fail until there is one']
            conftest.write_text("\n".join(ctext), encoding="utf-8")
            written.append(Written(conftest, f"{name}'s inputs in build_cases"))

    # 4. The mutant and its catalogue entry.
    mutant.parent.mkdir(parents=True, exist_ok=True)
    placeholder = f"{signature}\n    raise NotImplementedError  # {MARKER}: the reference's {name} with one classic mistake\n"
    mutant.write_text(
        f"# expect: lose\n# assignment: {assignment_id}\n# exercise: {name}\n"
        f"# message: {MARKER}\n# diagnosis: {sname}_todo\n"
        f"# why: {MARKER}: the mistake, as a student makes it\n# may_fail: none\n\n"
        f"import torch\n\n\n{placeholder}", encoding="utf-8")
    written.append(Written(mutant, f"a mutant of {name}"))
    catalogue.parent.mkdir(parents=True, exist_ok=True)
    indented = "\n".join("  " + ln if ln else "" for ln in f"import torch\n\n\n{placeholder}".split("\n"))
    catalogue.write_text(
        f"exercise: {name}\ntitle: '{MARKER}: the mistake in a few words, as the card names it'\n"
        f"explanation: '{MARKER}: what to do instead, in one sentence'\ndefine: |\n{indented.rstrip()}\n",
        encoding="utf-8")
    written.append(Written(catalogue, f"the catalogued mistake of {name}"))

    # 5. The lesson step, the contract row, the clause row.
    lesson = lessons[0]
    llines = lesson.read_text(encoding="utf-8").split("\n")
    s_start = next(i for i, line in enumerate(llines) if line.rstrip() == "steps:")
    s_end = _block_end(llines, s_start, 0)
    llines[s_end:s_end] = [f"  {name}:", "    explain: |",
                           f"      ## {MARKER}: the title of the step of {name}", "",
                           f"      {MARKER}: what `{name}` is for and how to build it, in the lesson's words.",
                           "    cells:",  # each a mapping: `- code: |` (a demo) or `- markdown: |`
                           "      - code: |",
                           f"          # {MARKER}: a demo that prints what `{name}` gives: print({name}(...))"]
    # The intro's numbered list of steps ("  8. `attention_entropy`: ..."): the new step, last, like the stub.
    i_start = next((i for i, line in enumerate(llines) if line.rstrip() in ("intro: |", "intro: |-")), None)
    if i_start is not None:
        i_end = _block_end(llines, i_start, 0)
        numbered = [i for i in range(i_start + 1, i_end) if re.match(r"\s+\d+\. ", llines[i])]
        if numbered:
            last = llines[numbered[-1]]
            indent, number = re.match(r"(\s+)(\d+)\. ", last).groups()  # type: ignore[union-attr]
            llines[numbered[-1] + 1:numbered[-1] + 1] = [
                f"{indent}{int(number) + 1}. `{name}`: {MARKER}: what this step adds, in the lesson's words"]
    lesson.write_text("\n".join(llines), encoding="utf-8")
    written.append(Written(lesson, f"the lesson step of {name} and its line in the intro's list of steps"))
    row = f"| `{name}({call_signature(shape)})` | {MARKER}: its inputs | {MARKER}: what it returns |" \
        if not is_class else f"| `{name}(nn.Module)` | {MARKER}: its constructor | {MARKER}: its contract |"
    clines = contract.read_text(encoding="utf-8").split("\n")
    heading = next((i for i, line in enumerate(clines) if line.startswith(f"## Assignment `{assignment_id}`")), None)
    if heading is None:
        raise AuthoringError(f"{contract} has no '## Assignment `{assignment_id}`' section")
    first_row = next(i for i in range(heading, len(clines)) if clines[i].startswith("|"))
    last_row = next(i for i in range(first_row, len(clines) + 1) if i == len(clines) or not clines[i].startswith("|"))
    clines[last_row:last_row] = [row]
    contract.write_text("\n".join(clines), encoding="utf-8")
    written.append(Written(contract, f"the contract row of {name}"))
    _append(clauses, f"  - id: {sname}.todo\n    assignment: {assignment_id}\n    subject: [{name}]\n"
                     f"    text: '{MARKER}: the promise, quoted short from {name}''s row of docs/CONTRACT.md'\n"
                     f"    checks: {{{name}: [{own_check}]}}\n"
                     f"    mutants: [{assignment_id}/mutants/{sname}_todo]\n")
    written.append(Written(clauses, f"the clause rows of {name}"))
    return written


def _what_fits(model: object, like: ast.FunctionDef | ast.ClassDef, new: ast.FunctionDef | ast.ClassDef
               ) -> tuple[list[str], list[int]]:
    """The model's ``returns`` names and gradient inputs that fit the new signature: the names where it returns a
    tuple of as many values (placeholders for another count; none for one value), the gradient inputs that index
    its parameters."""
    if new is like:
        return ([] if model.returns == ("output",) else list(model.returns)), list(model.gradient_inputs)
    assert isinstance(new, ast.FunctionDef)
    count = returned_count(new)
    if count is None:
        returns: list[str] = []
    elif count == len(model.returns):
        returns = list(model.returns)
    else:
        returns = [f"value_{i}" for i in range(count)]  # named by the author: the line carries MARKER
    params = len(new.args.posonlyargs + new.args.args)
    return returns, [i for i in model.gradient_inputs if i < params]


def command(name: str, assignment_id: str, like: str, root: Path | None = None, signature: str | None = None) -> int:
    """``grader new-exercise``: the files written, then what is left to fill; one line and 2 on bad input."""
    import sys

    from grader.config import COURSE_ROOT

    root = root or COURSE_ROOT
    try:
        written = new_exercise(name, assignment_id, like, root, signature)
    except AuthoringError as exc:
        sys.stderr.write(f"grader: {exc}\n")
        return 2
    for w in written:
        try:
            shown = w.path.resolve().relative_to(root.resolve())
        except ValueError:
            shown = w.path
        sys.stdout.write(f"wrote {shown}: {w.what}\n")
    sys.stdout.write(f"Every placeholder says {MARKER}. What {name} still lacks, file by file:\n"
                     f"  .venv/bin/python -m pytest -q tests/test_authoring.py -k real_project\n")
    return 0
