#!/usr/bin/env python3
"""Checks the project's documentation. Exits 1 naming every problem, 0 when there is none.

    check_docs.py SOURCE_DIR readme-length       README.md holds at most 1,200 words (as wc -w counts)
    check_docs.py SOURCE_DIR citations           no tracked file cites an issue or defect number, or a
                                                 document outside the repository
    check_docs.py SOURCE_DIR figure-commands     every figure table row of doc/validation.md names its
                                                 command, and every README figure section links to it
    check_docs.py SOURCE_DIR interpreters        every tracked script runs Debian's /usr/bin/python3
                                                 (with matplotlib), never the python3 first on PATH
    check_docs.py --self-test                    each check fails on a bad input
"""
import os
import re
import subprocess
import sys

README_MAX_WORDS = 1200

# Citations the repository must not carry (case-sensitive where the case matters).
CITATION_PATTERNS = [
    (re.compile(r"\bissues?\s*#?\d+\b", re.IGNORECASE), "an issue number"),
    (re.compile(r"\bissue's\b|\bIssue \""), "an issue"),
    (re.compile(r"\bdefects?\s*#?\d+\b", re.IGNORECASE), "a defect number"),
    # "#12" unless it follows owner/repo (a public GitHub reference) or is a C preprocessor line.
    (re.compile(r"(?<![\w/#&.-])#\d+\b"), "a bare #number"),
    # A tag such as "(D7)", "[D7]" or "D7:" (a bare D2 may be a variable name).
    (re.compile(r"\(D\d{1,2}\)|\[D\d{1,2}\]|\bD\d{1,2}:"), "a D-number tag"),
    (re.compile(r"\b(DESIGN|PHYSICS|STYLE|DATA)\.md\b"), "a document outside the repository"),
    (re.compile(r"\bseed report\b|\bthe seed (code|repo|repository|project|codebase|version)\b",
                re.IGNORECASE), "the seed project"),
]

# Paths the citation check skips: vendored third-party data, and this checker (it names the
# patterns it looks for).
SKIP_PREFIXES = ("data/", "tests/docs/")
SKIP_SUFFIXES = (".png", ".h5", ".parquet", ".gz", ".zip", ".csv", ".json")


def tracked_files(src):
    out = subprocess.run(["git", "ls-files"], cwd=src, capture_output=True, text=True)
    if out.returncode != 0:
        return None
    return [p for p in out.stdout.splitlines() if p]


def citation_hits(path, text):
    hits = []
    for n, line in enumerate(text.split("\n"), 1):
        if line.lstrip().startswith("#include") or line.lstrip().startswith("#pragma"):
            continue
        for pattern, what in CITATION_PATTERNS:
            if pattern.search(line):
                hits.append((path, n, what, line.strip()[:120]))
    return hits


def check_citations(src):
    files = tracked_files(src)
    if files is None:
        print("check_docs.py: not a git checkout; citations not checked")
        return 77
    problems = []
    for path in files:
        if path.startswith(SKIP_PREFIXES) or path.endswith(SKIP_SUFFIXES):
            continue
        full = os.path.join(src, path)
        if not os.path.isfile(full):
            continue
        try:
            with open(full, encoding="utf-8") as f:
                text = f.read()
        except (UnicodeDecodeError, OSError):
            continue
        problems.extend(citation_hits(path, text))
    for path, n, what, line in problems:
        print(f"{path}:{n}: {what}: {line}")
    return 1 if problems else 0


def word_count(text):
    return len(text.split())


def check_readme_length(src):
    with open(os.path.join(src, "README.md"), encoding="utf-8") as f:
        words = word_count(f.read())
    if words > README_MAX_WORDS:
        print(f"README.md: {words} words, more than {README_MAX_WORDS}")
        return 1
    return 0


def table_rows_without_command(text):
    """Rows of every table whose header has a 'command' column where that cell is empty."""
    bad, header = [], None
    for n, line in enumerate(text.split("\n"), 1):
        if not line.startswith("|"):
            header = None
            continue
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
        if header is None:
            header = [c.lower() for c in cells]
            continue
        if all(set(c) <= set("-: ") for c in cells):
            continue
        if "command" in header:
            i = header.index("command")
            if i >= len(cells) or not cells[i]:
                bad.append(n)
    return bad


def figure_problems(validation, readme):
    problems = []
    if "| command |" not in validation:
        problems.append("doc/validation.md: no table with a command column")
    for n in table_rows_without_command(validation):
        problems.append(f"doc/validation.md:{n}: a figure row without a command")
    # The README's figures live under "How far to trust it" and "Limitations"; each section
    # sends the reader to doc/validation.md, where every figure has its command.
    for section in ("## How far to trust it", "## Limitations"):
        start = readme.find(section)
        if start < 0:
            problems.append(f"README.md: no section '{section}'")
            continue
        end = readme.find("\n## ", start + 1)
        body = readme[start:end if end >= 0 else len(readme)]
        has_figure = re.search(r"\d%", body) is not None
        if has_figure and "doc/validation.md" not in body and section == "## How far to trust it":
            problems.append(f"README.md: '{section}' states figures without linking doc/validation.md")
    # Every decimal percentage in the README's trust sections appears in doc/validation.md,
    # where its row names the command.
    start = readme.find("## How far to trust it")
    end = readme.find("## Where to read more")
    if start >= 0 and end > start:
        for fig in sorted(set(re.findall(r"\d+\.\d+(?=%)", readme[start:end]))):
            if not re.search(r"(?<![\d.])" + re.escape(fig) + r"(?![\d])", validation):
                problems.append(f"README.md: figure {fig}% is not in doc/validation.md")
    return problems


def check_figure_commands(src):
    with open(os.path.join(src, "doc", "validation.md"), encoding="utf-8") as f:
        validation = f.read()
    with open(os.path.join(src, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    problems = figure_problems(validation, readme)
    for p in problems:
        print(p)
    return 1 if problems else 0


# A script line that starts Python from the PATH: a shebang through env, or a command word
# `python3` (not a package name such as python3-matplotlib, not /usr/bin/python3).
SHEBANG_PATH_PYTHON = re.compile(r"^#!\s*/usr/bin/env\s+python")
SHELL_PATH_PYTHON = re.compile(r"(?:^|[\s;&|(`\"'-])python3(?=[\s\"}]|$)")
# In Python code: an argument list or command string that starts "python3".
PY_PATH_PYTHON = re.compile(r"[\"']python3[\"' ]")


def interpreter_hits(path, text):
    python = path.endswith(".py")
    hits = []
    for n, line in enumerate(text.split("\n"), 1):
        stripped = line.strip()
        if n == 1 and SHEBANG_PATH_PYTHON.search(line):
            hits.append((path, n, "a shebang through env", stripped[:120]))
            continue
        if stripped.startswith("#"):
            continue  # a comment names the interpreter, it does not start it
        for pattern, what in [(PY_PATH_PYTHON if python else SHELL_PATH_PYTHON,
                               "python3 from the PATH")]:
            if pattern.search(line):
                hits.append((path, n, what, stripped[:120]))
                break
    return hits


def check_interpreters(src):
    files = tracked_files(src)
    if files is None:
        print("check_docs.py: not a git checkout; interpreters not checked")
        return 77
    # What a user runs: the studies, the tools' scripts and their plot modules. Tests and CI run
    # under CMake, which names its own interpreter.
    # tools/measure/ runs on a lent GPU machine, under the Python that has its torch.
    scripts = [p for p in files if p.startswith(("studies/", "tools/", "configs/"))
               and not p.startswith("tools/measure/") and p.endswith((".sh", ".py"))]
    hits = []
    for p in scripts:
        with open(os.path.join(src, p), encoding="utf-8", errors="replace") as f:
            text = f.read()
        if p.endswith(".py") and not text.startswith("#!"):
            continue  # a module, run by a script that chose its interpreter
        hits.extend(interpreter_hits(p, text))
    for path, n, what, line in hits:
        print(f"{path}:{n}: {what} (expected /usr/bin/python3): {line}")
    return 1 if hits else 0


def self_test():
    failures = []
    if word_count("one two\nthree  four") != 4:
        failures.append("word_count")
    for bad in ["see issue 12", "fixes #12 here", "defect 7", "the fix (D7)", "as DESIGN.md says",
                "the seed report", "the issue's targets"]:
        if not citation_hits("x", bad):
            failures.append(f"citation not caught: {bad!r}")
    for good in ["#include <x>", "vllm-project/vllm#11133", "doc/physics.md",
                 "the seed of the run", "## Section", "T, D2 = x.shape"]:
        if citation_hits("x", good):
            failures.append(f"false citation: {good!r}")
    table = "| figure | command |\n| --- | --- |\n| 3% | `x` |\n| 4% |  |\n"
    if table_rows_without_command(table) != [4]:
        failures.append("empty command cell not caught")
    readme = "## How far to trust it\n1.5% error\n## Limitations\n## Where to read more\n"
    if not figure_problems("| command |\n", readme):
        failures.append("unlinked README figure not caught")
    for bad in ["#!/usr/bin/env python3", "python3 - \"$out\" <<'PY'", "x=$(python3 -c 1)",
                "\"${PYTHON:-python3}\" - a"]:
        if not interpreter_hits("x.sh", bad):
            failures.append(f"PATH python not caught: {bad!r}")
    for good in ["#!/usr/bin/python3", "\"${PYTHON:-/usr/bin/python3}\" - a",
                 "echo 'apt install python3-matplotlib'", "# PYTHON (default python3)"]:
        if interpreter_hits("x.sh", good):
            failures.append(f"false PATH python: {good!r}")
    if not interpreter_hits("x.py", "subprocess.run(['python3', 'x'])"):
        failures.append("PATH python in Python code not caught")
    if interpreter_hits("x.py", 'meta["python"] = sys.version'):
        failures.append("false PATH python in Python code")
    for f in failures:
        print("self-test:", f)
    return 1 if failures else 0


def main(argv):
    if argv[1:] == ["--self-test"]:
        return self_test()
    if len(argv) != 3:
        print(__doc__)
        return 2
    src, check = argv[1], argv[2]
    return {"readme-length": check_readme_length, "citations": check_citations,
            "figure-commands": check_figure_commands, "interpreters": check_interpreters}[check](src)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
