from eyeful.cli import main

raise SystemExit(main())
