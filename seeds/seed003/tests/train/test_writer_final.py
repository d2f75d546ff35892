"""``<out>/final`` names the writer's last adapter whichever round trained last (no torch)."""

from __future__ import annotations

from statelab_seed003.train.pipeline import point_final


def test_final_points_at_the_last_trained_round_and_is_replaced(tmp_path):
    for r in (0, 1):
        (tmp_path / f"round{r}").mkdir()
        (tmp_path / f"round{r}" / "adapter_config.json").write_text(f'{{"round": {r}}}')
    final = point_final(tmp_path, tmp_path / "round0")  # round 1 trained nothing
    assert final == tmp_path / "final"
    assert (final / "adapter_config.json").read_text() == '{"round": 0}'
    point_final(tmp_path, tmp_path / "round1")  # a rerun whose round 1 trained
    assert (final / "adapter_config.json").read_text() == '{"round": 1}'
    assert final.resolve() == (tmp_path / "round1").resolve()
