"""The fuzzing campaigns' command line (``fuseflow.fuzz.driver``): a short run writes its JSON,
runs on consecutive seed ranges merge into one, a replay prints its case."""

import json

from fuseflow.fuzz.driver import campaign_main


def _replay(kernels, seed):
    print(f"replayed {seed}: {kernels.check_opt(kernels.opt_case(seed)).outcome.value}")


def _main(argv, tmp_path):
    return campaign_main("opt fuzzing\n", module="fuseflow.fuzz.kernels", check="check_opt",
                         replay=_replay, default_json=tmp_path / "default.json",
                         default_cases=1, default_timeout=30.0, progress_every=2, argv=argv)


def test_runs_merge_and_replay(tmp_path, capsys):
    for first in (0, 3):
        assert _main(["--cases", "3", "--first-seed", str(first), "--json",
                      str(tmp_path / f"part{first}.json")], tmp_path) == 0
    parts = [json.loads((tmp_path / f"part{f}.json").read_text()) for f in (0, 3)]
    assert all(p["complete"] and p["cases"] == 3 for p in parts)
    assert [p["first_seed"] for p in parts] == [0, 3]
    assert _main(["--merge", str(tmp_path / "part0.json"), str(tmp_path / "part3.json"),
                  "--json", str(tmp_path / "all.json")], tmp_path) == 0
    merged = json.loads((tmp_path / "all.json").read_text())
    assert merged["cases"] == 6
    assert sum(merged["counts"].values()) == 6
    capsys.readouterr()
    assert _main(["--replay", "4"], tmp_path) == 0
    assert capsys.readouterr().out.startswith("replayed 4: ")
    assert not (tmp_path / "default.json").exists()
