from eyeful.cli.app import main

raise SystemExit(main())
