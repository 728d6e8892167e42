#!/usr/bin/python3
"""Regenerates (or checks) the example outputs in the project's Markdown files.

An example is a marker line followed by a fenced block:

    <!-- example: build/tools/simulate configs/h200_sarathi.yaml -->
    <!-- example lines=7: build/tools/simulate configs/h200_sarathi.yaml -->

The block becomes "$ COMMAND" and the command's output (stdout and stderr), or its first N lines
and a "…" line with lines=N. Commands run in the repository root through bash; a leading
build/tools/ is replaced by $SERVESIM_TOOLS_DIR when set (the CTest sets it to the build's
tools folder). Commands must be deterministic: leave wall times out with lines=N.

    tools/readme_examples.py [FILE ...]          rewrite the blocks (run before a release)
    tools/readme_examples.py --check [FILE ...]  exit 1 naming every block that is not current

FILE defaults to README.md. The examples read the repository's data/ folder.
"""
import difflib
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MARKER = re.compile(r"^<!-- example(?: lines=(\d+))?: (.+?) -->$")


OUTPUTS = {}  # command -> output: a command shown in several files runs once (it is deterministic)


def run(command):
    if command not in OUTPUTS:
        OUTPUTS[command] = execute(command)
    return OUTPUTS[command]


def execute(command):
    tools = os.environ.get("SERVESIM_TOOLS_DIR")
    executed = command
    if tools and command.startswith("build/tools/"):
        executed = os.path.join(tools, command[len("build/tools/"):])
    done = subprocess.run(["bash", "-c", executed], cwd=ROOT, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"readme_examples.py: `{command}` exited {done.returncode}:\n{done.stderr}")
    return done.stdout + done.stderr


def render(command, lines, output):
    out = output.rstrip("\n").split("\n")
    if lines is not None and len(out) > lines:
        out = out[:lines] + ["…"]
    return ["$ " + command] + out


def process(path, check):
    with open(path) as f:
        text = f.read().split("\n")
    result, stale, i = [], [], 0
    while i < len(text):
        line = text[i]
        result.append(line)
        m = MARKER.match(line)
        i += 1
        if not m:
            continue
        if i >= len(text) or not text[i].startswith("```"):
            sys.exit(f"readme_examples.py: {path}:{i}: expected a ``` block after the marker")
        fence = text[i]
        end = i + 1
        while end < len(text) and text[end] != "```":
            end += 1
        if end == len(text):
            sys.exit(f"readme_examples.py: {path}:{i + 1}: the ``` block is never closed")
        old = text[i + 1:end]
        new = render(m.group(2), int(m.group(1)) if m.group(1) else None, run(m.group(2)))
        if old != new:
            stale.append((i + 1, m.group(2), old, new))
        result += [fence] + new + ["```"]
        i = end + 1
    if check:
        for line, command, old, new in stale:
            print(f"{path}:{line}: the output of `{command}` has changed:")
            sys.stdout.writelines(l + "\n" for l in difflib.unified_diff(old, new, "README",
                                                                         "now", lineterm=""))
        return not stale
    if stale:
        with open(path, "w") as f:
            f.write("\n".join(result))
        print(f"{path}: rewrote {len(stale)} example block(s)")
    return True


def main(argv):
    check = "--check" in argv
    files = [a for a in argv[1:] if a != "--check"] or ["README.md"]
    ok = all([process(os.path.join(ROOT, f) if not os.path.isabs(f) else f, check)
              for f in files])
    if check and ok:
        print(f"{', '.join(files)}: every example block is current")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
