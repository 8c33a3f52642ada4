"""physiojudge's baseline for the online P300 speller: cross-subject shrinkage LDA on
band-passed centro-parietal epochs, group and character scores summed over sequences,
and dynamic stopping on the character posterior. See README.md."""

import sys

from physiojudge_stream import AlgorithmInterface, ReportModel

try:
    from . import settings, speller, training
except ImportError:  # imported as a top-level module (the folder is on sys.path)
    import settings
    import speller
    import training


class AlgorithmImplement(AlgorithmInterface):
    def __init__(self):
        super().__init__()
        self.decoder = None

    @staticmethod
    def train(data_dir, model_dir):
        training.train(data_dir, model_dir)

    def run(self):
        model = training.load(self.model_dir)
        if model is None:
            print("no trained model: using the untrained template, no dynamic stopping", file=sys.stderr)
            model = training.untrained()
        params, weights, alpha, theta = model
        self.decoder = speller.Decoder(params, weights, alpha, theta, dynamic=settings.DYNAMIC_STOPPING)
        print(
            f"{len(params.channels)} channels, {params.epoch} samples per epoch, "
            f"alpha {alpha:.3f}, threshold {theta:.3f}, dynamic stopping {settings.DYNAMIC_STOPPING}",
            file=sys.stderr,
        )
        while True:
            packet = self.task.get_data()
            for code in self.decoder.feed(packet.data, packet.start_position):
                self.task.report(ReportModel(code))
            if packet.finished_flag:
                break
