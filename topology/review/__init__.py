"""Pull-request review: validate, diff, plan and draw the topologies a pull request changes,
and keep one comment on the pull request up to date with the result.

`selection`, `event`, `findings`, `comment` and `annotations` are pure (values in, values out);
`git`, `github` and `__main__` are the edges that run git, `topo plan` and talk to GitHub.
`action.yml` at the repository root runs `python -m topology.review`.
"""
