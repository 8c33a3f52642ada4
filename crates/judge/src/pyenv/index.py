"""The judge's questions to a package index, run on the host with the runtime's own
interpreter (`python -I index.py COMMAND INDEX_URL` with JSON on stdin, JSON on stdout).

Only the index's listing (the PEP 691 JSON simple API) is read: no package is
downloaded, imported or built here. Wheel tags and version clauses are judged with the
`packaging` library pip carries, so "has a wheel for the runtime" means what pip means.

Commands:
  unmet: [{"name", "specifier", "marker", "extras"}] -> the names the runtime as it is
         does not meet (asks the index nothing)
  check: [{"name", "specifier", "marker"}] -> for each requirement the runtime does not
         already meet, whether some version allowed by the specifier has a wheel for
         this interpreter; if not, what the team is told.
  sizes: [{"name", "filename"}] -> {"filename": size in bytes or null}
  broken: {name: version} of an environment -> the runtime's packages it breaks
"""

import json
import platform
import sys
import urllib.request
from importlib import metadata

from pip._vendor.packaging.markers import Marker
from pip._vendor.packaging.requirements import Requirement
from pip._vendor.packaging.specifiers import SpecifierSet
from pip._vendor.packaging.tags import sys_tags
from pip._vendor.packaging.utils import (
    canonicalize_name,
    parse_sdist_filename,
    parse_wheel_filename,
)
from pip._vendor.packaging.version import InvalidVersion, Version

TIMEOUT_S = 60
# A project listing larger than this is not read (numpy's is about 2 MB).
LISTING_CAP = 64 << 20
TAGS = set(sys_tags())
HERE = "CPython %d.%d on %s Linux" % (
    sys.version_info[0],
    sys.version_info[1],
    platform.machine(),
)


def listing(index, name):
    url = "%s/%s/" % (index.rstrip("/"), canonicalize_name(name))
    req = urllib.request.Request(
        url, headers={"Accept": "application/vnd.pypi.simple.v1+json"}
    )
    try:
        with urllib.request.urlopen(req, timeout=TIMEOUT_S) as r:
            body = r.read(LISTING_CAP + 1)
    except urllib.error.HTTPError as e:
        if e.code == 404:
            return None
        raise
    if len(body) > LISTING_CAP:
        raise RuntimeError("the index's listing of %s is too large" % name)
    return json.loads(body)


def files_by_version(files):
    """{Version: {"wheels": [tags...], "sdist": bool, "requires_python": str}}"""
    out = {}
    for f in files:
        if f.get("yanked"):
            continue
        fn = f.get("filename", "")
        try:
            if fn.endswith(".whl"):
                _, v, _, tags = parse_wheel_filename(fn)
                e = out.setdefault(v, {"wheels": [], "sdist": False, "rp": None})
                e["wheels"].append(tags)
            elif fn.endswith((".tar.gz", ".zip")):
                _, v = parse_sdist_filename(fn)
                e = out.setdefault(v, {"wheels": [], "sdist": False, "rp": None})
                e["sdist"] = True
            else:
                continue
        except Exception:
            continue
        rp = f.get("requires-python")
        if rp:
            e["rp"] = rp
    return out


def fits(tags):
    return any(t in TAGS for t in tags)


def pythons(tag_sets):
    """What a version's wheels are for, e.g. 'CPython 3.8, 3.9, 3.10'."""
    cp, other = set(), set()
    for tags in tag_sets:
        for t in tags:
            i = t.interpreter
            if i.startswith("cp") and i[2:].isdigit() and len(i) >= 4:
                cp.add((int(i[2]), int(i[3:])))
            else:
                other.add(i)
    parts = []
    if cp:
        parts.append("CPython " + ", ".join("%d.%d" % v for v in sorted(cp)))
    parts.extend(sorted(other))
    return ", ".join(parts)


def installed(name):
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def met_by_runtime(r):
    """Whether the runtime as it is meets a requirement (its own dependencies are met:
    `pip check` passed when it was built). Extras may need more: never met here."""
    if r.get("marker") and not Marker(r["marker"]).evaluate():
        return True
    have = installed(r["name"])
    spec = SpecifierSet(r["specifier"], prereleases=False)
    return not r.get("extras") and have is not None and spec.contains(have, prereleases=True)


def unmet(reqs):
    return [r["name"] for r in reqs if not met_by_runtime(r)]


def check(index, reqs):
    out = []
    for r in reqs:
        name, spec = r["name"], SpecifierSet(r["specifier"], prereleases=False)
        have = installed(name)
        if met_by_runtime(r) or (
            have is not None and spec.contains(have, prereleases=True)
        ):
            continue
        data = listing(index, name)
        if data is None:
            out.append({"name": name, "message": "%s is not on the package index" % name})
            continue
        versions = files_by_version(data.get("files", []))
        wheeled = sorted(v for v, e in versions.items() if any(fits(t) for t in e["wheels"]))
        allowed = [v for v in wheeled if spec.contains(v)]
        if allowed:
            continue
        asked = r["specifier"] or "any version"
        runtime = ("%s %s is in the runtime" % (name, have)) if have else (
            "the runtime does not have %s" % name
        )
        if not wheeled:
            kinds = "only source distributions" if any(
                e["sdist"] for e in versions.values()
            ) else "no files the judge can use"
            out.append({
                "name": name,
                "message": "%s has no wheel for %s in any version (%s, which the judge "
                "never builds); %s. What to do: vendor the module's .py files into the "
                "entry, or use a package that ships wheels"
                % (name, HERE, kinds, runtime),
            })
            continue
        # The versions the clause asks for, and what their wheels need.
        asked_versions = [v for v in versions if spec.contains(v)]
        needs = ""
        if asked_versions:
            v = max(asked_versions)
            e = versions[v]
            if e["wheels"]:
                needs = "; its wheels are for %s" % pythons(e["wheels"])
            elif e["sdist"]:
                needs = "; it has only a source distribution"
            if e["rp"]:
                needs += " (it requires Python %s)" % e["rp"]
            what = "%s %s" % (name, v) if r["specifier"].startswith("==") else (
                "%s %s (newest allowed: %s)" % (name, asked, v)
            )
        else:
            what = "%s %s (no such version)" % (name, asked)
        # Advice is never a pre-release: `>=2.12.0rc0` lets pip take any later rc.
        final = [v for v in wheeled if not (v.is_prerelease or v.is_devrelease)]
        if not final:
            out.append({
                "name": name,
                "message": "%s has no wheel for %s%s; only pre-releases (%s to %s) have "
                "one, and the judge advises no pre-release; %s. What to do: vendor the "
                "module's .py files into the entry, or use a package that ships wheels"
                % (what, HERE, needs, wheeled[0], wheeled[-1], runtime),
            })
            continue
        line, wide, bare = era_line(name, final, asked_versions)
        out.append({
            "name": name,
            "advice": [line, wide, bare],
            "message": "%s has no wheel for %s%s; %s is the oldest release that has one "
            "and %s the newest; %s. What to do: write %s (the release series nearest "
            "to what was asked that has a wheel), or vendor the module's .py files into "
            "the entry"
            % (what, HERE, needs, final[0], final[-1], runtime, line),
        })
    return out


def era_line(name, final, asked_versions):
    """The requirements to advise for a version without a wheel, narrowest first: the
    first release with one at or after what was asked, no later than its own minor
    series, so that code of the pin's era keeps the APIs it used (numpy 1.16 ->
    numpy>=1.23.2,<1.24: `np.float` went in 1.24)."""
    top = max(asked_versions) if asked_versions else None
    later = [v for v in final if top is None or v >= top]
    v = later[0] if later else final[-1]
    if len(v.release) >= 2:
        upper = "%d.%d" % (v.release[0], v.release[1] + 1)
    else:
        upper = "%d" % (v.release[0] + 1)
    # Wider, for when the series' own pins conflict (wfdb 3.0.0 pins numpy==1.18.5):
    # the same major version, then any later release.
    return (
        "%s>=%s,<%s" % (name, v, upper),
        "%s>=%s,<%d" % (name, v, v.release[0] + 1),
        "%s>=%s" % (name, v),
    )


def broken(overlay):
    """The runtime's packages that the environment `overlay` ({name: version}, what
    is installed in front of the runtime) breaks: those not replaced by it whose own
    requirements it no longer meets. -> [[name, version], ...]"""
    over = {canonicalize_name(k): Version(v) for k, v in overlay.items()}
    out = []
    seen = set()
    for dist in metadata.distributions():
        dname = canonicalize_name(dist.metadata["Name"] or "")
        if not dname or dname in over or dname in seen:
            continue
        seen.add(dname)
        for req in dist.requires or []:
            try:
                r = Requirement(req)
            except Exception:
                continue
            if r.marker is not None and not r.marker.evaluate({"extra": ""}):
                continue
            n = canonicalize_name(r.name)
            if n in over and not r.specifier.contains(over[n], prereleases=True):
                out.append([dist.metadata["Name"], dist.version])
                break
    return out


def sizes(index, files):
    out = {}
    seen = {}
    for f in files:
        name = canonicalize_name(f["name"])
        if name not in seen:
            seen[name] = listing(index, name) or {"files": []}
        size = None
        for g in seen[name].get("files", []):
            if g.get("filename") == f["filename"]:
                size = g.get("size")
        out[f["filename"]] = size
    return out


def main():
    command, index = sys.argv[1], sys.argv[2]
    arg = json.load(sys.stdin)
    if command == "unmet":
        result = unmet(arg)
    elif command == "check":
        result = check(index, arg)
    elif command == "sizes":
        result = sizes(index, arg)
    elif command == "broken":
        result = broken(arg)
    else:
        raise SystemExit("unknown command %s" % command)
    json.dump(result, sys.stdout)


if __name__ == "__main__":
    main()
