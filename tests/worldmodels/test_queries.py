from statelab.worldmodels.queries import parse, query_text


def test_query_text_reads_the_action_channel():
    assert query_text("query where is the apple?") == "where is the apple?"
    assert query_text("Action: query state") == "state"
    assert query_text("go to fridge 1") is None


def test_parse_reads_every_query_kind():
    assert parse("where is an apple?").kind == "where"
    assert parse("where is an apple?").arg == "apple"
    assert parse("what's in fridge 1").arg == "fridge 1"
    assert parse("have I searched drawer 2").kind == "searched"
    assert parse("what is at 2 steps forward").kind == "at"
    assert parse("what have I seen").kind == "seen"
    assert parse("map").kind == "map" and parse("status").kind == "state"
    assert parse("fly me to the moon").kind == "unknown"
