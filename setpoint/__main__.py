from setpoint.cli.main import main

main()
