"""Model runs in, verdicts out: run files read and imported (`importer`: one module per format in `formats`,
bounded archive reading in `archive`, the checks against the dataset in `resolve`, the records in `records`),
a model run on a chat endpoint (`model`, `sgp_model`, `sgp_inference`), SGP board-state answers imported
(`sgp_inference_import`), a response file read (`response_file`), stored verdicts rescored (`rescore`)."""
