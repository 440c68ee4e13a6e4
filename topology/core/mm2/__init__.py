"""MirrorMaker 2 interop: `mm2.properties` in (`topo import mm2`) and out (`topo export mm2`).

- `properties`: Java's .properties format, read with line numbers and written back.
- `vocabulary`: what MM2's property names mean and its defaults, in one place.
- `references`: config-provider references (`${env:NAME}`) and SASL JAAS lines, both ways.
- `importer`: properties text -> topology data, diagnostics and the environment variables to set;
  with `import_context` (diagnostics, secrets -> references), `import_clusters` (connection and
  security), `import_settings` (connector settings), `import_header` (the output's comment) and
  `import_check` (problems in the imported topology, shown at the property they came from).
- `grouping`: enabled MM2 flows -> topo's mirror, active-active and aggregate flows.
- `yaml_out`: topology data -> commented YAML text that YAML 1.1 and 1.2 loaders read alike.
- `exporter`: a resolved `Topology` -> properties text and what MM2 cannot express.
- `wire`: MM2's heartbeat, checkpoint and offset-sync records, bytes both ways.

Everything here is pure: text and values in, text and values out.
"""
