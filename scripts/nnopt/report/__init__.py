"""Reports of a Plan: terminal text (:mod:`.text`) and the memory-over-time picture
(:mod:`.plot`); the JSON report is :func:`nnopt.driver.report_json`."""
