from tracetui.cli import main

main()
