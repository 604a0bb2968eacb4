"""The docs match the tree: every pass declared in a Passes.td has a
summary and a description; docs/PASSES.md is what the build generates from
them (so it lists every pass); docs/DESIGN.md names every pass and
pipeline; and neither DESIGN.md nor README.md names a pass or pipeline that
does not exist.

    python3 check_docs.py SOURCE_ROOT BUILD_ROOT
"""
import glob
import os
import re
import sys

PASS = re.compile(r'def\s+\w+\s*:\s*Pass<"([\w-]+)"[^{]*\{(.*?)\n\}', re.S)
NAME_LIKE = re.compile(r"`-?((?:graph|train|dist|sinter|convert)-[a-z0-9-]+)")
TOOLS = {"sinter-opt", "sinter-run"}


def passes(root):
    """{name: (summary, description)} of every Passes.td."""
    found = {}
    for td in glob.glob(os.path.join(root, "**", "Passes.td"), recursive=True):
        if os.sep + "build" in td[len(root):]:
            continue
        for name, body in PASS.findall(open(td).read()):
            summary = re.search(r'let summary\s*=\s*"(.*?)";', body, re.S)
            description = re.search(r"let description\s*=\s*\[\{(.*?)\}\];", body, re.S)
            found[name] = (summary.group(1).strip() if summary else "",
                           description.group(1).strip() if description else "")
    return found


def pipelines(root):
    text = open(os.path.join(root, "compiler/Pipelines/Pipelines.cpp")).read()
    return set(re.findall(r'PassPipelineRegistration<>\(\s*"([\w-]+)"', text))


def main():
    root, build = sys.argv[1], sys.argv[2]
    problems = []
    known = passes(root)
    for name, (summary, description) in sorted(known.items()):
        if not summary:
            problems.append(f"pass {name} has no summary")
        if not description:
            problems.append(f"pass {name} has no description")
    committed = open(os.path.join(root, "docs/PASSES.md")).read()
    generated = open(os.path.join(build, "docs/PASSES.md")).read()
    if committed != generated:
        problems.append("docs/PASSES.md differs from what the build generates "
                        "(cmake --build build --target sinter-pass-docs rewrites it)")
    problems += [f"docs/PASSES.md does not list {n}" for n in sorted(known)
                 if f"### `-{n}`" not in committed]
    names = set(known) | pipelines(root)
    design = open(os.path.join(root, "docs/DESIGN.md")).read()
    problems += [f"docs/DESIGN.md does not name {n}" for n in sorted(names)
                 if f"`{n}`" not in design and f"`-{n}`" not in design]
    for doc in ("docs/DESIGN.md", "README.md"):
        for n in sorted(set(NAME_LIKE.findall(open(os.path.join(root, doc)).read()))):
            if n not in names and n not in TOOLS:
                problems.append(f"{doc} names {n}, which is no pass or pipeline")
    if problems:
        sys.exit("FAIL:\n" + "\n".join(problems))
    print(f"docs: {len(known)} passes, each with a summary and a description, all in "
          f"docs/PASSES.md as generated; docs/DESIGN.md names them and "
          f"{len(names) - len(known)} pipelines, and no doc names one that does not exist")


if __name__ == "__main__":
    main()
