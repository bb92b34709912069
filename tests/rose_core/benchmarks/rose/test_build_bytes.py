"""The build's output bytes are pinned: every file of the session's small dataset (seed 7, scale 0.05) has the
sha256 recorded in data/small_build.sha256, which was written by the build before its speed-ups (issue 20).
A change that alters one PNG, one record or the manifest fails here, naming the files. Regenerate the list
only for a change meant to alter the dataset (and say so in the changelog):

    python -m rose_core build --seed 7 --scale 0.05 --out /tmp/small && \
        (cd /tmp/small && find . -type f | sort | sed 's|^\\./||' | xargs sha256sum) \
        > tests/rose_core/benchmarks/rose/data/small_build.sha256

The digests depend on Pillow's PNG encoder (pillow==13.0.0 in requirements.txt, its bundled zlib-ng).
"""
from __future__ import annotations

import hashlib
from pathlib import Path

GOLDEN = Path(__file__).parent / "data" / "small_build.sha256"


def folder_digests(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def test_small_build_is_byte_identical_to_the_pinned_digests(small_dataset):
    assert (small_dataset.manifest["seed"], small_dataset.manifest["scale"]) == (7, 0.05), \
        "the golden digests are of the seed 7, scale 0.05 build: the session fixture changed"
    want = {rel: sha for sha, rel in (line.split("  ", 1) for line in GOLDEN.read_text().splitlines())}
    got = folder_digests(small_dataset.root)
    assert sorted(got) == sorted(want), f"files differ: only built {sorted(set(got) - set(want))[:5]}, " \
                                        f"only pinned {sorted(set(want) - set(got))[:5]}"
    changed = [rel for rel in want if got[rel] != want[rel]]
    assert not changed, f"{len(changed)} of {len(want)} files changed bytes, e.g. {changed[:5]}"
