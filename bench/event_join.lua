-- wrk: every request is a join (POST with an empty body), for bench/event_push.py.
wrk.method = "POST"
wrk.body = ""
