"""ROSE v0.1: the perception-to-action gap benchmark.

Assets → composition → scenes → renderings (+ visibility floors) → instances; the protocol parser and the
scorer; metrics; the reference agents and the exports for model harnesses.
"""
