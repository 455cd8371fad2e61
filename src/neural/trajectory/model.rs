//! The trajectory network: a multilayer perceptron from a frame's head-motion features to
//! every vertex's displacement (both scaled to unit spread), with LeakyReLU between layers.

use burn::nn::{Linear, LinearConfig};
use burn::prelude::*;
use burn::tensor::activation::leaky_relu;

#[derive(Config, Debug)]
pub struct TrajectoryNetConfig {
    pub inputs: usize,
    pub outputs: usize,
    #[config(default = 256)]
    pub hidden: usize,
}

impl TrajectoryNetConfig {
    pub fn init<B: Backend>(&self, dev: &B::Device) -> TrajectoryNet<B> {
        TrajectoryNet {
            first: LinearConfig::new(self.inputs, self.hidden).init(dev),
            second: LinearConfig::new(self.hidden, self.hidden).init(dev),
            out: LinearConfig::new(self.hidden, self.outputs).init(dev),
        }
    }
}

#[derive(Module, Debug)]
pub struct TrajectoryNet<B: Backend> {
    first: Linear<B>,
    second: Linear<B>,
    out: Linear<B>,
}

impl<B: Backend> TrajectoryNet<B> {
    /// `[frames, inputs]` → `[frames, outputs]`.
    pub fn forward(&self, x: Tensor<B, 2>) -> Tensor<B, 2> {
        let h = leaky_relu(self.first.forward(x), 0.01);
        let h = leaky_relu(self.second.forward(h), 0.01);
        self.out.forward(h)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use burn::backend::Flex;

    #[test]
    fn shapes() {
        let dev = Default::default();
        let net = TrajectoryNetConfig::new(99, 12).with_hidden(8).init::<Flex>(&dev);
        let y = net.forward(Tensor::zeros([5, 99], &dev));
        assert_eq!(y.dims(), [5, 12]);
    }
}
