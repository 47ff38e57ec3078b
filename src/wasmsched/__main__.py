from wasmsched.cli import main

main()
