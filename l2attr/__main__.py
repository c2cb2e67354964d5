from l2attr.cli import main

raise SystemExit(main())
