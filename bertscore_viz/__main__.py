from bertscore_viz.cli.entry import main

raise SystemExit(main())
