"""A piece of the graph as returned to callers, and its exports: JSON, GraphML and Mermaid."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from xml.etree import ElementTree as ET

from memstrata.records.graph import Entity, Relation


@dataclass(frozen=True)
class Edge:
    """A relation with the names of its ends, ready to show."""

    source: str
    relation: str
    target: str
    record: Relation

    def __str__(self) -> str:
        when = "" if self.record.current else f" (until {self.record.valid_to:%Y-%m-%d})"
        return f"{self.source} —{self.relation}→ {self.target}{when}"


@dataclass(frozen=True)
class Subgraph:
    entities: list[Entity]
    relations: list[Relation]

    def edges(self) -> list[Edge]:
        names = {entity.id: entity.name for entity in self.entities}
        return [
            Edge(names.get(r.source_id, r.source_id), r.relation, names.get(r.target_id, r.target_id), r)
            for r in self.relations
        ]

    def to_json(self) -> str:
        return json.dumps(
            {
                "entities": [entity.model_dump(mode="json") for entity in self.entities],
                "relations": [relation.model_dump(mode="json") for relation in self.relations],
            },
            ensure_ascii=False,
            indent=2,
        )

    def to_graphml(self) -> str:
        """GraphML for Gephi / yEd / networkx: node name, type, aliases; edge relation, validity, confidence."""
        root = ET.Element("graphml", xmlns="http://graphml.graphdrawing.org/xmlns")
        keys = [
            ("name", "node"), ("type", "node"), ("aliases", "node"), ("relation", "edge"), ("valid_from", "edge"),
            ("valid_to", "edge"), ("confidence", "edge"),
        ]  # fmt: skip
        for name, domain in keys:
            ET.SubElement(root, "key", {"id": name, "for": domain, "attr.name": name, "attr.type": "string"})
        graph = ET.SubElement(root, "graph", id="memstrata", edgedefault="directed")
        for entity in self.entities:
            node = ET.SubElement(graph, "node", id=entity.id)
            for key, value in (("name", entity.name), ("type", entity.type), ("aliases", "|".join(entity.aliases))):
                ET.SubElement(node, "data", key=key).text = value
        for relation in self.relations:
            edge = ET.SubElement(graph, "edge", id=relation.id, source=relation.source_id, target=relation.target_id)
            values = (
                ("relation", relation.relation),
                ("valid_from", relation.valid_from.isoformat()),
                ("valid_to", relation.valid_to.isoformat() if relation.valid_to else ""),
                ("confidence", f"{relation.confidence:.2f}"),
            )
            for key, value in values:
                ET.SubElement(edge, "data", key=key).text = value
        ET.indent(root)
        return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode")

    def to_mermaid(self) -> str:
        """A Mermaid flowchart; closed relations are dotted."""
        lines = ["graph LR"]
        ids = {entity.id: f"e{number}" for number, entity in enumerate(self.entities)}
        for entity in self.entities:
            lines.append(f'    {ids[entity.id]}["{_mermaid_text(entity.name)}<br/><i>{entity.type}</i>"]')
        for relation in self.relations:
            if relation.source_id in ids and relation.target_id in ids:
                arrow = "-->" if relation.current else "-.->"
                label = _mermaid_text(relation.relation)
                lines.append(f"    {ids[relation.source_id]} {arrow}|{label}| {ids[relation.target_id]}")
        return "\n".join(lines) + "\n"


def _mermaid_text(text: str) -> str:
    return re.sub(r'["|<>\[\]{}]', " ", text)
