"""The knowledge base: entries (errata/*.yaml) and what makes one valid.

The loader (entries, yamlpos), the schema (schema/entry.schema.json) and the checks of the data every reader relies
on (usable) are the bottom layer every other part reads through. validate (the full `errbook validate`) and
scaffold (`errbook new`) sit on top of it and also use the other parts' own checkers: triage.matcher compiles
signatures, machine.checks validates machine checks. versions, regexsubset, variants and parameters are the
formats of entry fields; stale and verified read entries for review dates and content digests.
"""
