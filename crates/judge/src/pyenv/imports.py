"""Prep's import check, run by the runtime's Python in a sandbox run of the entry's
built environment (the entry's folder read as files, never run):
`python /imports/check.py ENTRY_DIR [OWN_NAME...]`, one JSON object a line on stdout
(OWN_NAME: modules the judge puts beside the entry, such as a challenge's helper code).

1. Every .py file of the entry is parsed with `ast` (nothing of it runs). Each
   `import X` / `from X import ...` of a top-level module is noted with its first
   file and line, and whether every one of its imports is guarded by a `try` whose
   handler catches ImportError (then the entry copes without it).
2. Modules that are the entry's own (a .py file, extension or folder of that name
   anywhere in the entry), `__future__` and the standard library are left out.
3. Each remaining module is imported, in this process, one after another, with its
   stderr captured (NumPy writes its ABI complaint there). A line `{"trying": X}`
   comes first, so that a crash of the interpreter still names the module.

Lines: {"unparsed": file, "line": N, "message": ...} for a file `ast` cannot read;
{"trying": X}; {"module": X, "file", "line", "guarded", "ok", "type", "message",
"stderr", "dist", "version"} for each import.
"""

import ast
import contextlib
import io
import json
import os
import sys
import traceback
from importlib import import_module, metadata

MAX_FILES = 2000
MAX_BYTES = 2 << 20
GUARDS = {"ImportError", "ModuleNotFoundError", "Exception", "BaseException"}


def emit(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def catches_import_error(handler):
    t = handler.type
    if t is None:
        return True
    names = t.elts if isinstance(t, ast.Tuple) else [t]
    for n in names:
        if isinstance(n, ast.Name) and n.id in GUARDS:
            return True
        if isinstance(n, ast.Attribute) and n.attr in GUARDS:
            return True
    return False


class Imports(ast.NodeVisitor):
    def __init__(self):
        self.found = []  # (module, line, guarded)
        self.guard = 0

    def visit_Try(self, node):
        guarded = any(catches_import_error(h) for h in node.handlers)
        self.guard += guarded
        for n in node.body:
            self.visit(n)
        self.guard -= guarded
        for part in (node.handlers, node.orelse, node.finalbody):
            for n in part:
                self.visit(n)

    visit_TryStar = visit_Try

    def visit_Import(self, node):
        for a in node.names:
            self.found.append((a.name.split(".")[0], node.lineno, self.guard > 0))

    def visit_ImportFrom(self, node):
        if node.level == 0 and node.module:
            self.found.append((node.module.split(".")[0], node.lineno, self.guard > 0))


def walk(root):
    own, files = set(), []
    for d, dirs, names in os.walk(root):
        dirs[:] = sorted(x for x in dirs if not x.startswith(".") and x != "__pycache__")
        own.update(dirs)
        for n in sorted(names):
            stem, ext = os.path.splitext(n)
            if ext in (".py", ".pyc", ".so", ".pyd"):
                own.add(stem.split(".")[0])
            if ext == ".py" and len(files) < MAX_FILES:
                files.append(os.path.join(d, n))
    return own, files


def distribution(module):
    try:
        dists = metadata.packages_distributions().get(module) or []
    except Exception:
        dists = []
    for name in dists:
        try:
            return name, metadata.version(name)
        except Exception:
            continue
    return None, None


def main():
    root = sys.argv[1]
    own, files = walk(root)
    own.update(sys.argv[2:])
    first = {}  # module -> [file, line, all guarded]
    for path in files:
        rel = os.path.relpath(path, root)
        try:
            if os.path.getsize(path) > MAX_BYTES:
                continue
            with open(path, "rb") as f:
                tree = ast.parse(f.read(), filename=rel)
        except SyntaxError as e:
            emit({"unparsed": rel, "line": e.lineno or 0, "message": "%s" % e.msg})
            continue
        except (RecursionError, MemoryError, ValueError, OSError) as e:
            emit({"unparsed": rel, "line": 0, "message": type(e).__name__})
            continue
        v = Imports()
        try:
            v.visit(tree)
        except RecursionError:
            emit({"unparsed": rel, "line": 0, "message": "nested too deeply"})
            continue
        for module, line, guarded in v.found:
            if module not in first:
                first[module] = [rel, line, guarded]
            elif not guarded:
                first[module][2] = False
    std = stdlib_names()
    for module in sorted(first):
        if module in own or module in std or module == "__future__":
            continue
        rel, line, guarded = first[module]
        emit({"trying": module})
        err = io.StringIO()
        result = {"module": module, "file": rel, "line": line, "guarded": guarded}
        try:
            with contextlib.redirect_stderr(err):
                import_module(module)
            result["ok"] = True
        except BaseException as e:  # SystemExit and KeyboardInterrupt included
            last = "".join(traceback.format_exception_only(type(e), e)).strip()
            result.update({
                "ok": False,
                "type": type(e).__name__,
                "message": last.splitlines()[-1] if last else type(e).__name__,
                "missing": getattr(e, "name", None),
            })
        result["stderr"] = err.getvalue()[-2000:]
        result["dist"], result["version"] = distribution(module)
        emit(result)



def stdlib_names():
    """The standard library's top-level names: sys.stdlib_module_names from CPython
    3.10 on; before it (bullseye's 3.9) the names in the standard library's folder and
    its lib-dynload, as the judge's requirement reading lists them."""
    names = set(sys.builtin_module_names)
    listed = getattr(sys, "stdlib_module_names", None)
    if listed is not None:
        return names | set(listed)
    import sysconfig
    std = sysconfig.get_paths()["stdlib"]
    for d in (std, os.path.join(std, "lib-dynload")):
        try:
            names |= {n.split(".")[0] for n in os.listdir(d)}
        except OSError:
            pass
    return names


if __name__ == "__main__":
    main()
