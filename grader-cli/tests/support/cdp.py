# Drives a running headless Chromium over the DevTools protocol, with aiohttp (a dependency of
# Inspect AI, so in its test venv): opens a URL, waits until a JavaScript expression is true (a
# page that loads its data after the load event, as Inspect AI's viewer does), evaluates
# expressions, and takes a screenshot. Reads its orders as JSON on stdin, prints the values as
# JSON. Talks to 127.0.0.1 only.
import asyncio
import base64
import json
import sys
import time

import aiohttp


async def main(orders):
    port = orders["port"]
    async with aiohttp.ClientSession() as http:
        async with http.get(f"http://127.0.0.1:{port}/json/list") as response:
            pages = [t for t in await response.json() if t["type"] == "page"]
        async with http.ws_connect(pages[0]["webSocketDebuggerUrl"], max_msg_size=0) as ws:
            counter = iter(range(1, 1 << 30))

            async def call(method, **params):
                ident = next(counter)
                await ws.send_json({"id": ident, "method": method, "params": params})
                while True:
                    message = await ws.receive_json()
                    if message.get("id") == ident:
                        if "error" in message:
                            raise RuntimeError(f"{method}: {message['error']}")
                        return message["result"]

            async def evaluate(expression):
                result = await call(
                    "Runtime.evaluate",
                    expression=expression,
                    returnByValue=True,
                    awaitPromise=True,
                )
                if "exceptionDetails" in result:
                    raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
                return result["result"].get("value")

            await call("Page.enable")
            await call(
                "Emulation.setDeviceMetricsOverride",
                width=orders["width"],
                height=orders["height"],
                deviceScaleFactor=1,
                mobile=False,
            )
            await call("Page.navigate", url=orders["url"])
            deadline = time.monotonic() + orders["timeout"]
            last = None
            while True:
                try:
                    if await evaluate(orders["wait"]):
                        break
                except RuntimeError as error:  # the page is still being replaced
                    last = error
                if time.monotonic() > deadline:
                    body = await evaluate("document.body ? document.body.innerText : ''")
                    sys.exit(f"timed out waiting for {orders['wait']} ({last}); the page says:\n{body}")
                await asyncio.sleep(0.1)
            values = [await evaluate(expression) for expression in orders["evaluate"]]
            if orders.get("screenshot"):
                shot = await call("Page.captureScreenshot", format="png")
                with open(orders["screenshot"], "wb") as file:
                    file.write(base64.b64decode(shot["data"]))
            print(json.dumps(values))


asyncio.run(main(json.load(sys.stdin)))
