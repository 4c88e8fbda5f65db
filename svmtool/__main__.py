from svmtool.cli import main

main()
