"""A two-node Ray cluster on 127.0.0.1 for tests/test_rllib_cluster.py (run as a script).

A head and a second node (``ray.cluster_utils.Cluster``: each its own raylet, object
store and node id; the head also runs the GCS), both with node address 127.0.0.1, 1 CPU
and 1 unit of the custom resource ``rummy_runner`` (so env runners that need one land
one per node). Prints ``{"address", "nodes"}`` as one JSON line, holds the nodes until
stdin closes, shuts both down (only these nodes, unlike ``ray stop``, which stops every
Ray of the machine) and prints ``CLUSTER DOWN``."""
import json
import sys

from rummy_env.train.rllib import ray_environ

ray_environ(local=True)  # node addresses 127.0.0.1, no usage stats, no cloud probe
from ray.cluster_utils import Cluster  # noqa: E402

args = dict(num_cpus=1, resources={"rummy_runner": 1}, node_ip_address="127.0.0.1", object_store_memory=96 * 2**20)
c = Cluster(initialize_head=True, connect=False, head_node_args=dict(args, include_dashboard=False))
c.add_node(**args)
c.wait_for_nodes()
print(json.dumps({"address": c.address, "nodes": [n.node_id for n in c.list_all_nodes()]}), flush=True)
sys.stdin.read()
c.shutdown()
print("CLUSTER DOWN", flush=True)
