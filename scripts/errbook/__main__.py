import sys

from errbook.cli import main

sys.exit(main())
