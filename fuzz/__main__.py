from pcfuzz.fuzz.cli import main

raise SystemExit(main())
