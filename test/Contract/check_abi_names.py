"""The ABI's names live in one list, runtime/contract/abi_names.def: abi.h
declares exactly the names the list holds, and no source of the compiler
or the runtime spells one (or a prefix of one: "sinter_cuda_matmul_") in a
string literal; they use the list (AbiNames.h, or the C declarations).

    python3 check_abi_names.py SOURCE_ROOT
"""
import os
import re
import sys

PREFIXES = ("sinter_rt_", "sinter_cpu_", "sinter_cuda_", "sinter_step_", "sinter_plan_",
            "sinter_config", "sinter_library_", "sinter_abi_")


def without_comments(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def listed(root):
    text = without_comments(open(os.path.join(root, "runtime/contract/abi_names.def")).read())
    names = set(re.findall(r"^SINTER_ABI_(?:DATA|FUNCTION)\((\w+)\)", text, re.M))
    names |= {f"sinter_{d}_{op}" for d, op in
              re.findall(r"^SINTER_ABI_LIBRARY\((\w+), (\w+)\)", text, re.M)}
    return names


def declared(root):
    text = without_comments(open(os.path.join(root, "runtime/contract/abi.h")).read())
    return set(re.findall(r"\b(sinter_[a-z0-9_]+)\s*(?:\(|\[|;|__attribute__)", text))


def literals(root):
    """(file, line, literal) of each string literal that spells an ABI name."""
    found = []
    for top in ("compiler", "dialects", "frontend", "runtime"):
        for folder, _, files in os.walk(os.path.join(root, top)):
            for f in files:
                path = os.path.join(folder, f)
                if not f.endswith((".cpp", ".h", ".def", ".td")) or \
                        f in ("abi_names.def", "AbiNames.h", "abi.h"):
                    continue
                for n, line in enumerate(open(path, errors="replace"), 1):
                    for lit in re.findall(r'"(sinter_[a-z0-9_]*)', line):
                        if lit.startswith(PREFIXES):
                            found.append((os.path.relpath(path, root), n, lit))
    return found


def main():
    root = sys.argv[1]
    names, decl = listed(root), declared(root)
    problems = [f"abi.h declares {n}, which abi_names.def does not list"
                for n in sorted(decl - names)]
    problems += [f"abi_names.def lists {n}, which abi.h does not declare"
                 for n in sorted(names - decl)]
    problems += [f"{f}:{n}: \"{lit}...\" spells an ABI name outside the list"
                 for f, n, lit in literals(root)]
    if problems:
        sys.exit("FAIL:\n" + "\n".join(problems))
    print(f"abi names: {len(names)} in one list, all declared by abi.h; "
          "no source spells one outside it")


if __name__ == "__main__":
    main()
