import json

from statelab.run.config import parse_experiment
from statelab.run.runner import run_sync
from statelab.viewer import render_episodes

EVIL = "<script>alert('x')</script> Action: Move the top disk of rod A to the top of rod C"


def test_viewer_escapes_model_text(tmp_path):
    script = tmp_path / "r.json"
    script.write_text(json.dumps([EVIL, "<img src=x onerror=alert(1)>"]))
    exp = parse_experiment(
        {
            "name": "v",
            "model": f"scripted:{script}",
            "seeds": [0],
            "max_steps": 3,
            "grid": {"env": ["hanoi"], "history": ["summary"]},
            "out": str(tmp_path),
            "cache": None,
            "expert": False,
            "random": False,
        }
    )
    run_sync(exp, progress=None)
    page = render_episodes(exp.out_dir / "store.sqlite")
    assert "<script>" not in page and "<img" not in page
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in page
    assert "&lt;img src=x onerror=alert(1)&gt;" in page  # the summary call's text
    assert page.count("<details>") == 3  # one per step
