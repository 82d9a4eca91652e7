"""Reports of a Plan: terminal text (:mod:`.text`), JSON (:mod:`.json_report`) and the
memory-over-time picture (:mod:`.plot`)."""
