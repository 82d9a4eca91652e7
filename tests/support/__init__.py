"""Test support code: in-memory TFLite model builder (tflite_builder) and friends."""
