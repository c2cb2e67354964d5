"""The profile run's provenance comes from the manifests its profiled children wrote."""

import json

from l2attr.dlrm.profile.manifest import child_facts


def test_child_facts_takes_first_child_with_each_key(tmp_path):
    for name, body in (("a", {"gpu": {"name": "H200"}, "versions": {"torch": "2.11"}}),
                       ("b", {"gpu": {"name": "other"}, "variants": {"optmt": {}}})):
        (tmp_path / name).mkdir()
        (tmp_path / name / "manifest.json").write_text(json.dumps(body))
    facts = child_facts(tmp_path)
    assert facts == {"gpu": {"name": "H200"}, "versions": {"torch": "2.11"}, "variants": {"optmt": {}}}


def test_child_facts_empty_without_children(tmp_path):
    assert child_facts(tmp_path / "none") == {}
