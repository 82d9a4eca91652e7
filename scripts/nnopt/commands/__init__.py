"""CLI subcommands: each module has add_parser(sub) and run(args) -> int."""
