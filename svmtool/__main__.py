from svmtool._console import main

main()
