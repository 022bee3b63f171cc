"""python -m errbook.cli"""
import sys

from errbook.cli.app import main

sys.exit(main())
