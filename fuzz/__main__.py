from fuzz.cli import main

raise SystemExit(main())
