"""``python -m memstrata`` runs the CLI."""

from memstrata.cli.app import main

main()
