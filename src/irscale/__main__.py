from irscale.cli import app

app()
