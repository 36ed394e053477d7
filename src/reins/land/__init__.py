"""``reins land BRANCH``: every PASS of a coding quest merged onto one integration, judged after
each merge, and BRANCH moved onto it once the project's whole suite passes there.

:func:`~reins.land.integrate.land` is the run (one at a time per ledger); :mod:`~reins.land.plan`
reads what to land from the ledger (each PASS item, and the land items that stand for it);
:mod:`~reins.land.integration` is the land store, where each change is merged by ``merge-tree``
with no work tree; :mod:`~reins.land.journal` what a land keeps in the ledger (its lease and
its journal), so that any host can land and one killed on one host is finished on another;
:mod:`~reins.land.wholesuite` the project's own test command on the integration, the last word
before BRANCH moves; :mod:`~reins.land.run` what a run says, step by step.

A land item's payload and prompt (:mod:`reins.workspace.landtask`) stay below ``turn``: the
turn composes and judges a land item, and the loop's workshop starts it, as any item. The
package sits just above ``loop`` (it names the loop's crash points and its items' branch
template); only ``cli`` imports it. It imports none of its modules, so ``reins status`` and
``report`` load only the plan.
"""
