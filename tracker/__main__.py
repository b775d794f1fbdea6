from tracker.cli import main

main()
