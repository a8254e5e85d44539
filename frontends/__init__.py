"""The frontends of rummy-env (``rummy_env.frontends``): the terminal play (``play.py``,
``rummy play``), the HTTP policy server (``serve.py``, ``rummy serve``) and the web
practice table (``web.py`` with its page and positions in ``web_table/``, ``rummy web``).

They are applications on top of every layer, not agents: each builds an env, agents
(``rummy_env.agents``) and, for the web table, the ONNX export of the shipped policy
(``rummy_env.train.export``). Nothing below imports them.
"""
