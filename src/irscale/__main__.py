from irscale.cli import main

main()
