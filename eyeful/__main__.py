from eyeful.cli.launch import main

raise SystemExit(main())
