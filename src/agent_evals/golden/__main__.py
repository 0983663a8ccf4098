import sys

from agent_evals.golden.record import main

sys.exit(main())
