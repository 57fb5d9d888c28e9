#!/usr/bin/env python3
"""Submit a batch to a volsched (or BOINC) project and fetch its outputs.

Standard library only. It speaks the documented remote submission protocol
(docs/submitting.md): a form field request=<OP>...</OP> POSTed to
submit_rpc_handler.php or job_file.php, replies in XML, errors as
<error><error_msg>...</error_msg></error>, outputs from get_output.php.

    python3 submit_example.py URL AUTH APP INPUT... [--out DIR] [--fpops 2e10]

makes one job per INPUT file (uploaded once, named by its md5), waits for
the batch to finish, writes each job's first output to DIR/<job name>, and
retires the batch.
"""
import argparse
import hashlib
import os
import sys
import time
import urllib.parse
import urllib.request
import uuid
import xml.etree.ElementTree as ET
from xml.sax.saxutils import escape


class SubmitError(Exception):
    pass


def post(url, body, content_type):
    req = urllib.request.Request(url, data=body, headers={"Content-Type": content_type})
    try:
        with urllib.request.urlopen(req, timeout=120) as f:
            data = f.read()
    except urllib.error.HTTPError as e:  # a 413 still carries the error XML
        data = e.read()
    root = ET.fromstring(data)
    err = root if root.tag == "error" else root.find("error")
    if err is not None:
        raise SubmitError(err.findtext("error_msg", "").strip())
    return root


def rpc(project, handler, request_xml):
    body = urllib.parse.urlencode({"request": request_xml}).encode()
    return post(project + handler, body, "application/x-www-form-urlencoded")


def upload(project, request_xml, files):
    """files: [(phys_name, bytes)] as a multipart/form-data POST."""
    boundary = uuid.uuid4().hex
    parts = [f'--{boundary}\r\nContent-Disposition: form-data; name="request"\r\n\r\n'
             f"{request_xml}\r\n".encode()]
    for i, (name, data) in enumerate(files):
        parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="file_{i}"; '
                     f'filename="{name}"\r\nContent-Type: application/octet-stream\r\n\r\n'
                     .encode() + data + b"\r\n")
    parts.append(f"--{boundary}--\r\n".encode())
    return post(project + "job_file.php", b"".join(parts),
                f"multipart/form-data; boundary={boundary}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("url", help="the project's master URL")
    ap.add_argument("auth", help="your account key (authenticator)")
    ap.add_argument("app", help="the app to run")
    ap.add_argument("inputs", nargs="+", help="one job per input file")
    ap.add_argument("--out", default="out", help="where outputs go (default: out)")
    ap.add_argument("--fpops", type=float, default=2e10, help="estimated FLOPs per job")
    ap.add_argument("--timeout", type=float, default=3600, help="seconds to wait")
    a = ap.parse_args()
    project = a.url if a.url.endswith("/") else a.url + "/"
    auth = escape(a.auth)

    # 1. Upload the inputs the server does not have yet (content-addressed).
    files = []
    for path in a.inputs:
        data = open(path, "rb").read()
        files.append(("jf_" + hashlib.md5(data).hexdigest(), data))
    names = "".join(f"<phys_name>{n}</phys_name>" for n, _ in files)
    r = rpc(project, "job_file.php",
            f"<query_files><authenticator>{auth}</authenticator>{names}</query_files>")
    absent = [files[int(f.text)] for f in r.find("absent_files").findall("file")]
    if absent:
        up_names = "".join(f"<phys_name>{n}</phys_name>" for n, _ in absent)
        upload(project, f"<upload_files><authenticator>{auth}</authenticator>{up_names}"
                        f"</upload_files>", absent)
    print(f"{len(files)} inputs, {len(absent)} uploaded")

    # 2. Submit one job per input.
    jobs = "".join(f"<job><input_file><mode>local_staged</mode><source>{n}</source>"
                   f"</input_file></job>" for n, _ in files)
    r = rpc(project, "submit_rpc_handler.php",
            f"<submit_batch><authenticator>{auth}</authenticator><batch>"
            f"<app_name>{escape(a.app)}</app_name><job_params><rsc_fpops_est>{a.fpops}"
            f"</rsc_fpops_est></job_params>{jobs}</batch></submit_batch>")
    batch = r.findtext("batch_id").strip()
    print("batch", batch)

    # 3. Wait for it.
    t0 = time.time()
    while True:
        r = rpc(project, "submit_rpc_handler.php",
                f"<query_batch><authenticator>{auth}</authenticator><batch_id>{batch}</batch_id>"
                f"<get_job_details>1</get_job_details></query_batch>")
        state = r.findtext("state").strip()
        done = float(r.findtext("fraction_done"))
        print(f"\rbatch {batch}: {100 * done:.0f}% done", end="", flush=True)
        if state in ("2", "3"):
            print()
            break
        if time.time() - t0 > a.timeout:
            sys.exit(f"\nbatch {batch} not done after {a.timeout:.0f} s")
        time.sleep(5)

    # 4. Fetch each done job's first output: get_output.php with
    #    auth_str = md5(authenticator + result name).
    os.makedirs(a.out, exist_ok=True)
    for job in r.findall("job"):
        if job.findtext("status", "").strip() != "done":
            continue
        jr = rpc(project, "submit_rpc_handler.php",
                 f"<query_job><authenticator>{auth}</authenticator>"
                 f"<job_id>{job.findtext('id').strip()}</job_id></query_job>")
        canon = job.findtext("canonical_instance_id").strip()
        inst = [i for i in jr.findall("instance") if i.findtext("id").strip() == canon][0]
        rname = inst.findtext("name").strip()
        auth_str = hashlib.md5((a.auth + rname).encode()).hexdigest()
        q = urllib.parse.urlencode({"cmd": "result_file", "result_name": rname,
                                    "file_num": 0, "auth_str": auth_str})
        with urllib.request.urlopen(f"{project}get_output.php?{q}", timeout=120) as f:
            data = f.read()
        path = os.path.join(a.out, job.findtext("name").strip())
        with open(path, "wb") as out:
            out.write(data)
        print("wrote", path)

    # 5. Retire the batch: the server deletes its jobs and files.
    rpc(project, "submit_rpc_handler.php",
        f"<retire_batch><authenticator>{auth}</authenticator><batch_id>{batch}</batch_id>"
        f"</retire_batch>")
    print("batch", batch, "retired")


if __name__ == "__main__":
    try:
        main()
    except SubmitError as e:
        sys.exit(f"the project refused: {e}")
